"""SQL questions on order and rank: ORDER BY/LIMIT/OFFSET, n-th highest, window ranks, running totals.

Each domain is one question generator; drawing, scoring and probes come from
:func:`posttrain.domains.sql._kit.sql_domain`.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import CATEGORIES, REVENUE, YEARS, Question, sql_domain


def _order_limit(rng: random.Random, difficulty: int) -> Question:
    """Ordering and paging results with ORDER BY, LIMIT and OFFSET.

    ORDER BY with LIMIT/OFFSET: the n most expensive products (d1),
    ranks a..b of the cheapest products in a category-free list (d2), the n highest-paid
    employees hired before a year with salaries (d3). Ordered: right rows in the wrong order
    earn 0.5 per database."""
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


register_domain(sql_domain("sql.order_limit-v1", _order_limit, _order_limit.__doc__))


def _nth_highest(rng: random.Random, difficulty: int) -> Question:
    """Finding the n-th highest value, overall and per group.

    the n-th highest value: the 2nd highest salary overall (d1), the
    n-th most expensive product's name (d2), the 2nd highest salary in each department that
    has at least two employees, as (department id, salary) (d3)."""
    n = rng.randint(2, 5)
    if difficulty == 1:
        return Question("What is the second highest employee salary?",
                        "SELECT salary FROM employees ORDER BY salary DESC LIMIT 1 OFFSET 1", False,
                        "SELECT salary FROM employees")
    if difficulty == 2:
        return Question(f"What is the name of the {n}-th most expensive product (1 = the most expensive)?",
                        f"SELECT name FROM products ORDER BY price DESC LIMIT 1 OFFSET {n - 1}", False,
                        "SELECT name FROM products")
    return Question("For each department id with at least two employees, give the department id and its second "
                    "highest salary.",
                    "SELECT dept_id, salary FROM (SELECT dept_id, salary, ROW_NUMBER() OVER (PARTITION BY dept_id "
                    "ORDER BY salary DESC) AS rk FROM employees) WHERE rk = 2", False,
                    "SELECT dept_id, salary FROM employees")


register_domain(sql_domain("sql.nth_highest-v1", _nth_highest, _nth_highest.__doc__))


def _window_rank(rng: random.Random, difficulty: int) -> Question:
    """Ranking within groups with ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...).

    window functions: the k highest-paid employees per department as
    (department id, name, rank within department), k = 1 / 2 / 3. Salaries are unique, so the
    rank is unambiguous. Unordered."""
    k = difficulty
    return Question(f"For every department id, list its {k} highest-paid employee(s) as (department id, name, "
                    f"rank) where rank 1 is the highest salary within the department.",
                    "SELECT dept_id, name, rk FROM (SELECT dept_id, name, ROW_NUMBER() OVER (PARTITION BY dept_id "
                    f"ORDER BY salary DESC) AS rk FROM employees) WHERE rk <= {k}", False,
                    "SELECT dept_id, name, 1 FROM employees")


register_domain(sql_domain("sql.window_rank-v1", _window_rank, _window_rank.__doc__))


def _running_total(rng: random.Random, difficulty: int) -> Question:
    """Cumulative sums with SUM() OVER (ORDER BY ...), ordered output.

    cumulative sums with SUM() OVER (ORDER BY ...): per order of a
    month, (id, running total of quantity) by date then id (d1, d2 with a status filter),
    running revenue per order within a category (d3). Ordered."""
    y, m, cat = rng.choice(YEARS), rng.randint(1, 12), rng.choice(CATEGORIES)
    if difficulty < 3:
        st = " AND status = 'shipped'" if difficulty == 2 else ""
        words = " shipped" if difficulty == 2 else ""
        return Question(f"For the{words} orders dated in {y}-{m:02d}, ordered by order_date then id, list each order's "
                        "id and the running total of quantity up to and including it.",
                        "SELECT id, SUM(quantity) OVER (ORDER BY order_date, id) FROM orders WHERE order_date LIKE "
                        f"'{y}-{m:02d}-%'{st} ORDER BY order_date, id", True, "SELECT id, quantity FROM orders")
    return Question(f"For orders of products in category '{cat}' dated in {y}, ordered by order_date then order id, "
                    "list the order id and the running total of revenue (quantity * price) rounded to 2 decimals.",
                    f"SELECT o.id, ROUND(SUM({REVENUE}) OVER (ORDER BY o.order_date, o.id), 2) FROM orders o JOIN "
                    f"products p ON p.id = o.product_id WHERE p.category = '{cat}' AND o.order_date LIKE '{y}-%' "
                    "ORDER BY o.order_date, o.id", True, "SELECT id, quantity FROM orders")


register_domain(sql_domain("sql.running_total-v1", _running_total, _running_total.__doc__))
