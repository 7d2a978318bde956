"""Single-table SQL questions: filters, counting, grouping, HAVING, ordering, DISTINCT, dates,
NULLs and CASE. Each domain is one question generator; scoring is shared
(:func:`posttrain.domains.sql._db.score_sql`: exact result on two hidden databases, 0.5 per
database for the right rows in the wrong order when an order is asked).

Common probes for every SQL domain: the whole main table in the answer's shape, the sample
answer hard-coded as literals, DROP/PRAGMA/ATTACH, two statements.
"""

from __future__ import annotations

import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain

from ._db import CITIES, DEPTS, STATUSES, YEARS, Question, SqlPlumbing, make_sql_task


@register_domain
class Filter(SqlPlumbing):
    """sql.filter-v1 — WHERE clauses: employee names by salary (d1), + department (d2),
    + a second department or a hire year (d3). Unordered. Not covered: joins, LIKE patterns."""

    id = "sql.filter-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
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


@register_domain
class CountWhere(SqlPlumbing):
    """sql.count-v1 — COUNT(*) with conditions on orders: status (d1), + minimum quantity (d2),
    + a year (d3). One-cell answer. Not covered: COUNT(DISTINCT) (see sql.distinct_count-v1)."""

    id = "sql.count-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
        st, q, y = rng.choice(STATUSES), rng.randint(2, 4), rng.choice(YEARS)
        conds = [f"status = '{st}'"] + ([f"quantity >= {q}"] if difficulty >= 2 else []) + \
            ([f"order_date LIKE '{y}-%'"] if difficulty == 3 else [])
        words = [f"status '{st}'"] + ([f"a quantity of at least {q}"] if difficulty >= 2 else []) + \
            ([f"an order date in {y}"] if difficulty == 3 else [])
        return Question(f"How many orders have {' and '.join(words)}?",
                        f"SELECT COUNT(*) FROM orders WHERE {' AND '.join(conds)}", False, "SELECT id FROM orders")


@register_domain
class GroupAgg(SqlPlumbing):
    """sql.group_agg-v1 — GROUP BY on employees per department id: count (d1), count and
    average salary rounded to 2 decimals (d2), plus the max bonus ignoring NULLs (d3).
    Unordered. Not covered: HAVING (see sql.having-v1)."""

    id = "sql.group_agg-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
        x = rng.randrange(40, 90) * 1000
        cols = ["dept_id", "COUNT(*)"] + (["ROUND(AVG(salary), 2)"] if difficulty >= 2 else []) + \
            (["MAX(bonus)"] if difficulty == 3 else [])
        words = ["the department id", "the number of employees"] + \
            (["their average salary rounded to 2 decimals"] if difficulty >= 2 else []) + \
            (["their largest bonus (NULL bonuses ignored)"] if difficulty == 3 else [])
        where = f" WHERE salary > {x}" if difficulty != 2 else ""
        cond = f" earning more than {x}" if where else ""
        return Question(f"For each department that has employees{cond}, give {', '.join(words)} (counting only "
                        f"employees{cond or ''}).",
                        f"SELECT {', '.join(cols)} FROM employees{where} GROUP BY dept_id",
                        False, f"SELECT {', '.join(['dept_id'] + ['salary'] * (len(cols) - 1))} FROM employees")


@register_domain
class Having(SqlPlumbing):
    """sql.having-v1 — GROUP BY ... HAVING: customers ids with at least k orders (d1), with
    total quantity above t (d2), with at least k shipped orders in a year (d3). Unordered."""

    id = "sql.having-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
        k, t, y = rng.randint(3, 5), rng.randint(8, 14), rng.choice(YEARS)
        whole = "SELECT id FROM customers"
        if difficulty == 1:
            return Question(f"List the ids of customers who placed at least {k} orders.",
                            f"SELECT customer_id FROM orders GROUP BY customer_id HAVING COUNT(*) >= {k}", False, whole)
        if difficulty == 2:
            return Question(f"List the ids of customers whose orders have a total quantity above {t}.",
                            f"SELECT customer_id FROM orders GROUP BY customer_id HAVING SUM(quantity) > {t}",
                            False, whole)
        return Question(f"List the ids of customers with at least {k - 2} shipped orders dated in {y}, with that count.",
                        f"SELECT customer_id, COUNT(*) FROM orders WHERE status = 'shipped' AND order_date LIKE '{y}-%' "
                        f"GROUP BY customer_id HAVING COUNT(*) >= {k - 2}", False, "SELECT id, 1 FROM customers")


@register_domain
class OrderLimit(SqlPlumbing):
    """sql.order_limit-v1 — ORDER BY with LIMIT/OFFSET: the n most expensive products (d1),
    ranks a..b of the cheapest products in a category-free list (d2), the n highest-paid
    employees hired before a year with salaries (d3). Ordered: right rows in the wrong order
    earn 0.5 per database."""

    id = "sql.order_limit-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
        n, a, y = rng.randint(3, 6), rng.randint(2, 4), rng.randint(2018, 2023)
        if difficulty == 1:
            return Question(f"List the names and prices of the {n} most expensive products, most expensive first.",
                            f"SELECT name, price FROM products ORDER BY price DESC LIMIT {n}", True,
                            "SELECT name, price FROM products")
        if difficulty == 2:
            return Question(f"Order products from cheapest to most expensive; list the names of those at positions "
                            f"{a} to {a + n - 1} (1-based), in that order.",
                            f"SELECT name FROM products ORDER BY price ASC LIMIT {n} OFFSET {a - 1}", True,
                            "SELECT name FROM products")
        return Question(f"List the names and salaries of the {n} highest-paid employees hired before {y}-01-01, highest "
                        f"salary first.", f"SELECT name, salary FROM employees WHERE hire_date < '{y}-01-01' "
                        f"ORDER BY salary DESC LIMIT {n}", True, "SELECT name, salary FROM employees")


@register_domain
class DistinctCount(SqlPlumbing):
    """sql.distinct_count-v1 — COUNT(DISTINCT ...): distinct customers who ordered (d1), in a
    year (d2), and per product category via a join, as (category, count) rows (d3)."""

    id = "sql.distinct_count-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
        y, st = rng.choice(YEARS), rng.choice(STATUSES[:2])
        if difficulty == 1:
            return Question(f"How many distinct customers have at least one order with status '{st}'?",
                            f"SELECT COUNT(DISTINCT customer_id) FROM orders WHERE status = '{st}'", False,
                            "SELECT id FROM customers")
        if difficulty == 2:
            return Question(f"How many distinct products were ordered in {y}?",
                            f"SELECT COUNT(DISTINCT product_id) FROM orders WHERE order_date LIKE '{y}-%'", False,
                            "SELECT id FROM products")
        return Question(f"For each product category with orders in {y}, give the category and the number of distinct "
                        f"customers who ordered a product of that category in {y}.",
                        f"SELECT p.category, COUNT(DISTINCT o.customer_id) FROM orders o JOIN products p ON p.id = "
                        f"o.product_id WHERE o.order_date LIKE '{y}-%' GROUP BY p.category", False,
                        "SELECT category, id FROM products")


@register_domain
class DateFilter(SqlPlumbing):
    """sql.date_filter-v1 — ISO date strings: order ids in a month (d1), in a date range with a
    status (d2), employees hired in a given quarter of any year, with hire dates (d3)."""

    id = "sql.date_filter-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
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


@register_domain
class NullHandling(SqlPlumbing):
    """sql.nulls-v1 — NULL semantics: customers without an email (d1), total compensation
    salary + COALESCE(bonus, 0) above x (d2), per department the number of employees with
    and without a bonus (d3). Not covered: three-valued logic puzzles with NOT IN."""

    id = "sql.nulls-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
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


@register_domain
class CaseBuckets(SqlPlumbing):
    """sql.case-v1 — CASE expressions: salary bands counted per band (d1, d2 three bands),
    per (department id, band) (d3). Bands named 'low', 'mid', 'high'. Unordered."""

    id = "sql.case-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
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
