"""SQL questions on aggregating: COUNT, COUNT(DISTINCT), GROUP BY, HAVING, revenue roll-ups over a join.

Each domain is one question generator; drawing, scoring and probes come from
:func:`posttrain.domains.sql._kit.sql_domain`.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import CITIES, REVENUE, STATUSES, YEARS, Question, sql_domain


def _count(rng: random.Random, difficulty: int) -> Question:
    """Counting rows that meet conditions with COUNT(*) and WHERE.

    COUNT(*) with conditions on orders: status (d1), + minimum quantity (d2),
    + a year (d3). One-cell answer. Not covered: COUNT(DISTINCT) (see sql.distinct_count-v1)."""
    st, q, y = rng.choice(STATUSES), rng.randint(2, 4), rng.choice(YEARS)
    conds = [f"status = '{st}'"] + ([f"quantity >= {q}"] if difficulty >= 2 else []) + \
        ([f"order_date LIKE '{y}-%'"] if difficulty == 3 else [])
    words = [f"status '{st}'"] + ([f"a quantity of at least {q}"] if difficulty >= 2 else []) + \
        ([f"an order date in {y}"] if difficulty == 3 else [])
    return Question(f"How many orders have {' and '.join(words)}?",
                    f"SELECT COUNT(*) FROM orders WHERE {' AND '.join(conds)}", False, "SELECT id FROM orders")


register_domain(sql_domain("sql.count-v1", _count, _count.__doc__))


def _distinct_count(rng: random.Random, difficulty: int) -> Question:
    """Counting distinct values with COUNT(DISTINCT ...), overall and per group.

    COUNT(DISTINCT ...): distinct customers who ordered (d1), in a
    year (d2), and per product category via a join, as (category, count) rows (d3)."""
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


register_domain(sql_domain("sql.distinct_count-v1", _distinct_count, _distinct_count.__doc__))


def _group_agg(rng: random.Random, difficulty: int) -> Question:
    """Aggregating per group with GROUP BY: COUNT, rounded AVG, MAX ignoring NULLs.

    GROUP BY on employees per department id: count (d1), count and
    average salary rounded to 2 decimals (d2), plus the max bonus ignoring NULLs (d3).
    Unordered. Not covered: HAVING (see sql.having-v1)."""
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


register_domain(sql_domain("sql.group_agg-v1", _group_agg, _group_agg.__doc__))


def _having(rng: random.Random, difficulty: int) -> Question:
    """Filtering groups with GROUP BY ... HAVING on counts and sums.

    GROUP BY ... HAVING: customers ids with at least k orders (d1), with
    total quantity above t (d2), with at least k shipped orders in a year (d3). Unordered."""
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


register_domain(sql_domain("sql.having-v1", _having, _having.__doc__))


def _revenue(rng: random.Random, difficulty: int) -> Question:
    """Aggregating over a join: revenue (quantity * price) per category or customer, ranked.

    aggregate over a join: revenue (quantity * price, rounded to 2) per
    category, highest first (d1); for shipped orders in a year (d2); top customers by revenue
    with city filter (d3). Ordered."""
    y, city, n = rng.choice(YEARS), rng.choice(CITIES), rng.randint(2, 4)
    j = "FROM orders o JOIN products p ON p.id = o.product_id"
    if difficulty < 3:
        w = f" WHERE o.status = 'shipped' AND o.order_date LIKE '{y}-%'" if difficulty == 2 else ""
        words = f" over shipped orders dated in {y}" if difficulty == 2 else ""
        return Question(f"Give each product category with its total revenue (sum of quantity * price{words}), rounded "
                        "to 2 decimals, highest revenue first.",
                        f"SELECT p.category, ROUND(SUM({REVENUE}), 2) AS r {j}{w} GROUP BY p.category ORDER BY r DESC",
                        True, "SELECT category, price FROM products")
    return Question(f"List the names of the {n} customers living in {city} with the highest total revenue (sum of "
                    "quantity * price over all their orders) with that revenue rounded to 2 decimals, highest first.",
                    f"SELECT c.name, ROUND(SUM({REVENUE}), 2) AS r {j} JOIN customers c ON c.id = o.customer_id "
                    f"WHERE c.city = '{city}' GROUP BY c.id ORDER BY r DESC LIMIT {n}", True,
                    "SELECT name, 0 FROM customers")


register_domain(sql_domain("sql.revenue-v1", _revenue, _revenue.__doc__))
