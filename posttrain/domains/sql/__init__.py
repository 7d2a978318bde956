"""SQL domains: answer a question about a seeded SQLite company database with one SELECT.

The policy sees the schema and sample rows of one database instance; its query is run
read-only (:mod:`posttrain.verifiers.sqlresult`) on two hidden instances and compared with the
reference query's result there. Modules: ``queries_basic`` (single-table skills) and
``queries_adv`` (joins, subqueries, windows, set operations); ``_db`` holds the data generator.
"""

from . import queries_adv, queries_basic  # noqa: F401  (registration side effects)
