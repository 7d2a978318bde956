"""SQL domains: answer a question about a seeded SQLite company database with one SELECT.

The policy sees the schema and sample rows of one database instance; its query is run
read-only (:mod:`posttrain.verifiers.sqlresult`) on two hidden instances and compared with the
reference query's result there. Modules by skill: ``filtering`` (WHERE, dates, NULLs, CASE),
``aggregation`` (COUNT, GROUP BY, HAVING, roll-ups), ``joins`` (joins, anti-joins, set
operations, subqueries), ``ranking`` (ORDER BY/LIMIT, n-th highest, windows); ``_kit`` holds
the database generator and :func:`~posttrain.domains.sql._kit.sql_domain`.
"""

from . import aggregation, filtering, joins, ranking  # noqa: F401  (registration side effects)
