"""Single-table SQL questions on selecting rows: WHERE conditions, ISO dates, NULLs and CASE.

Each domain is one question generator; drawing, scoring and probes come from
:func:`posttrain.domains.sql._kit.sql_domain`.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import CITIES, DEPTS, STATUSES, YEARS, Question, sql_domain


def _filter(rng: random.Random, difficulty: int) -> Question:
    """Filtering rows with WHERE: comparisons, AND/OR, IN lists and date bounds.

    WHERE clauses: employee names by salary (d1), + department (d2),
    + a second department or a hire year (d3). Unordered. Not covered: joins, LIKE patterns."""
    x = rng.randrange(40, 130) * 1000
    d1, d2 = rng.sample(range(1, len(DEPTS) + 1), 2)
    y = rng.randint(2016, 2023)
    whole = "SELECT name FROM employees"
    if difficulty == 1:
        return Question(f"List the names of employees whose salary is above {x}.",
                        f"SELECT name FROM employees WHERE salary > {x}", False, whole)
    if difficulty == 2:
        return Question(f"List the names of employees in department id {d1} ({DEPTS[d1 - 1]}) whose salary "
                        f"is at most {x}.", f"SELECT name FROM employees WHERE dept_id = {d1} AND salary <= {x}",
                        False, whole)
    return Question(f"List the names and salaries of employees who are in department id {d1} or {d2} and were "
                    f"hired in {y} or later.",
                    f"SELECT name, salary FROM employees WHERE dept_id IN ({d1}, {d2}) AND hire_date >= '{y}-01-01'",
                    False, "SELECT name, salary FROM employees")


register_domain(sql_domain("sql.filter-v1", _filter, _filter.__doc__))


def _date_filter(rng: random.Random, difficulty: int) -> Question:
    """Filtering on ISO date strings: months, inclusive ranges, quarters via strftime.

    ISO date strings: order ids in a month (d1), in a date range with a
    status (d2), employees hired in a given quarter of any year, with hire dates (d3)."""
    y, m, st = rng.choice(YEARS), rng.randint(1, 12), rng.choice(STATUSES[:2])
    if difficulty == 1:
        return Question(f"List the ids of orders placed in {y}-{m:02d} (that calendar month).",
                        f"SELECT id FROM orders WHERE order_date LIKE '{y}-{m:02d}-%'", False, "SELECT id FROM orders")
    if difficulty == 2:
        m2 = min(12, m + rng.randint(1, 3))
        return Question(f"List the ids of '{st}' orders dated from {y}-{m:02d}-01 through {y}-{m2:02d}-28 inclusive.",
                        f"SELECT id FROM orders WHERE status = '{st}' AND order_date BETWEEN '{y}-{m:02d}-01' AND "
                        f"'{y}-{m2:02d}-28'", False, "SELECT id FROM orders")
    qtr = rng.randint(1, 4)
    months = ", ".join(f"'{mm:02d}'" for mm in range(3 * qtr - 2, 3 * qtr + 1))
    return Question(f"List the names and hire dates of employees hired in quarter Q{qtr} (months {3 * qtr - 2}-"
                    f"{3 * qtr}) of any year.",
                    f"SELECT name, hire_date FROM employees WHERE strftime('%m', hire_date) IN ({months})", False,
                    "SELECT name, hire_date FROM employees")


register_domain(sql_domain("sql.date_filter-v1", _date_filter, _date_filter.__doc__))


def _nulls(rng: random.Random, difficulty: int) -> Question:
    """NULL semantics: IS NULL, COALESCE in arithmetic, COUNT of a nullable column.

    NULL semantics: customers without an email (d1), total compensation
    salary + COALESCE(bonus, 0) above x (d2), per department the number of employees with
    and without a bonus (d3). Not covered: three-valued logic puzzles with NOT IN."""
    x, c = rng.randrange(60, 120) * 1000, rng.choice(CITIES)
    if difficulty == 1:
        return Question(f"List the names of customers in {c} who have no email address (email is NULL).",
                        f"SELECT name FROM customers WHERE email IS NULL AND city = '{c}'", False,
                        "SELECT name FROM customers")
    if difficulty == 2:
        return Question(f"List employee names whose total compensation (salary plus bonus, a NULL bonus counting "
                        f"as 0) exceeds {x}.", f"SELECT name FROM employees WHERE salary + COALESCE(bonus, 0) > {x}",
                        False, "SELECT name FROM employees")
    return Question("For each department id, give the number of employees with a bonus and the number without "
                    "one (NULL bonus).", "SELECT dept_id, COUNT(bonus), SUM(bonus IS NULL) FROM employees "
                    "GROUP BY dept_id", False, "SELECT dept_id, 1, 1 FROM employees")


register_domain(sql_domain("sql.nulls-v1", _nulls, _nulls.__doc__))


def _case(rng: random.Random, difficulty: int) -> Question:
    """CASE expressions: bucketing rows into named bands and counting per band.

    CASE expressions: salary bands counted per band (d1, d2 three bands),
    per (department id, band) (d3). Bands named 'low', 'mid', 'high'. Unordered."""
    lo = rng.randrange(50, 80) * 1000
    hi = lo + rng.randrange(20, 50) * 1000
    band = f"CASE WHEN salary < {lo} THEN 'low' WHEN salary < {hi} THEN 'mid' ELSE 'high' END"
    words = f"'low' below {lo}, 'mid' from {lo} up to but excluding {hi}, 'high' from {hi}"
    if difficulty == 1:
        band = f"CASE WHEN salary < {lo} THEN 'low' ELSE 'high' END"
        words = f"'low' below {lo}, 'high' otherwise"
    if difficulty < 3:
        return Question(f"Bucket employees by salary ({words}); give each band name with its employee count "
                        f"(only bands that occur).", f"SELECT {band}, COUNT(*) FROM employees GROUP BY 1", False,
                        "SELECT 'low', salary FROM employees")
    return Question(f"Bucket employees by salary ({words}); give department id, band name and employee count for "
                    f"every (department, band) pair that occurs.",
                    f"SELECT dept_id, {band}, COUNT(*) FROM employees GROUP BY 1, 2", False,
                    "SELECT dept_id, 'low', salary FROM employees")


register_domain(sql_domain("sql.case-v1", _case, _case.__doc__))
