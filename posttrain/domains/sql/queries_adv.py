"""Multi-table and analytic SQL questions: joins, anti-joins, correlated subqueries, window
functions, set operations, self-joins, running totals, revenue roll-ups, n-th highest values.

Scoring and probes are shared (see :mod:`posttrain.domains.sql.queries_basic`).
"""

from __future__ import annotations

import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain

from ._db import CATEGORIES, CITIES, DEPTS, YEARS, Question, SqlPlumbing, make_sql_task

REVENUE = "o.quantity * p.price"


@register_domain
class Join(SqlPlumbing):
    """sql.join-v1 — INNER JOINs: distinct names of customers who ordered a product of a
    category (d1), + living in a city (d2), employee names with their department name for a
    department city (d3). Unordered."""

    id = "sql.join-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
        cat, city = rng.choice(CATEGORIES), rng.choice(CITIES)
        base = ("SELECT DISTINCT c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
                f"JOIN products p ON p.id = o.product_id WHERE p.category = '{cat}'")
        if difficulty == 1:
            return Question(f"List the distinct names of customers who ordered at least one product in category "
                            f"'{cat}'.", base, False, "SELECT name FROM customers")
        if difficulty == 2:
            return Question(f"List the distinct names of customers living in {city} who ordered at least one product "
                            f"in category '{cat}'.", base + f" AND c.city = '{city}'", False, "SELECT name FROM customers")
        return Question(f"List each employee's name with their department's name, for departments located in {city}.",
                        "SELECT e.name, d.name FROM employees e JOIN departments d ON d.id = e.dept_id "
                        f"WHERE d.city = '{city}'", False, "SELECT name, 'x' FROM employees")


@register_domain
class AntiJoin(SqlPlumbing):
    """sql.anti_join-v1 — rows without a match: customers who never ordered (d1), customers who
    never ordered in a category (d2), products never ordered by customers of a city (d3)."""

    id = "sql.anti_join-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
        cat, city = rng.choice(CATEGORIES), rng.choice(CITIES)
        if difficulty == 1:
            return Question("List the names of customers who have never placed an order.",
                            "SELECT name FROM customers WHERE id NOT IN (SELECT customer_id FROM orders)", False,
                            "SELECT name FROM customers")
        if difficulty == 2:
            return Question(f"List the names of customers who never ordered a product in category '{cat}' (customers "
                            f"with no orders at all included).",
                            "SELECT name FROM customers WHERE id NOT IN (SELECT o.customer_id FROM orders o JOIN "
                            f"products p ON p.id = o.product_id WHERE p.category = '{cat}')", False,
                            "SELECT name FROM customers")
        return Question(f"List the names of products that no customer living in {city} ever ordered.",
                        "SELECT name FROM products WHERE id NOT IN (SELECT o.product_id FROM orders o JOIN customers c "
                        f"ON c.id = o.customer_id WHERE c.city = '{city}')", False, "SELECT name FROM products")


@register_domain
class Correlated(SqlPlumbing):
    """sql.correlated-v1 — subqueries: employees above the company average salary (d1), above
    their own department's average (d2, correlated), the top earner of each department with
    the department id (d3)."""

    id = "sql.correlated-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
        if difficulty == 1:
            return Question("List the names of employees whose salary is above the average salary of all employees.",
                            "SELECT name FROM employees WHERE salary > (SELECT AVG(salary) FROM employees)", False,
                            "SELECT name FROM employees")
        if difficulty == 2:
            return Question("List the names of employees paid more than the average salary of their own department.",
                            "SELECT e.name FROM employees e WHERE e.salary > (SELECT AVG(x.salary) FROM employees x "
                            "WHERE x.dept_id = e.dept_id)", False, "SELECT name FROM employees")
        return Question("For each department id, give the department id and the name of its highest-paid employee.",
                        "SELECT e.dept_id, e.name FROM employees e WHERE e.salary = (SELECT MAX(x.salary) FROM "
                        "employees x WHERE x.dept_id = e.dept_id)", False, "SELECT dept_id, name FROM employees")


@register_domain
class WindowRank(SqlPlumbing):
    """sql.window_rank-v1 — window functions: the k highest-paid employees per department as
    (department id, name, rank within department), k = 1 / 2 / 3. Salaries are unique, so the
    rank is unambiguous. Unordered."""

    id = "sql.window_rank-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
        k = difficulty
        return Question(f"For every department id, list its {k} highest-paid employee(s) as (department id, name, "
                        f"rank) where rank 1 is the highest salary within the department.",
                        "SELECT dept_id, name, rk FROM (SELECT dept_id, name, ROW_NUMBER() OVER (PARTITION BY dept_id "
                        f"ORDER BY salary DESC) AS rk FROM employees) WHERE rk <= {k}", False,
                        "SELECT dept_id, name, 1 FROM employees")


@register_domain
class SetOps(SqlPlumbing):
    """sql.set_ops-v1 — INTERSECT / EXCEPT / UNION: customer ids who ordered in both of two
    categories (d1), in one but not the other (d2), cities that have a customer or a department
    but not both (d3)."""

    id = "sql.set_ops-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
        a, b = rng.sample(CATEGORIES, 2)
        sel = "SELECT o.customer_id FROM orders o JOIN products p ON p.id = o.product_id WHERE p.category = '{}'"
        if difficulty == 1:
            return Question(f"List the ids of customers who ordered products in both category '{a}' and category '{b}'.",
                            f"{sel.format(a)} INTERSECT {sel.format(b)}", False, "SELECT id FROM customers")
        if difficulty == 2:
            return Question(f"List the ids of customers who ordered a product in category '{a}' but never one in "
                            f"category '{b}'.", f"{sel.format(a)} EXCEPT {sel.format(b)}", False,
                            "SELECT id FROM customers")
        return Question("List the cities that appear as a customer city or as a department city, but not as both.",
                        "SELECT city FROM (SELECT city FROM customers UNION SELECT city FROM departments) WHERE city NOT "
                        "IN (SELECT city FROM customers INTERSECT SELECT city FROM departments)", False,
                        "SELECT DISTINCT city FROM customers")


@register_domain
class SelfJoin(SqlPlumbing):
    """sql.self_join-v1 — joining employees to their managers: (employee, manager) name pairs in
    a department (d1), employees earning more than their manager (d2), managers with their
    number of direct reports (d3)."""

    id = "sql.self_join-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
        d = rng.randint(1, len(DEPTS))
        join = "FROM employees e JOIN employees m ON m.id = e.manager_id"
        if difficulty == 1:
            return Question(f"For employees of department id {d} that have a manager, list (employee name, manager name).",
                            f"SELECT e.name, m.name {join} WHERE e.dept_id = {d}", False,
                            "SELECT name, name FROM employees")
        if difficulty == 2:
            return Question("List (employee name, manager name) for employees who earn more than their manager.",
                            f"SELECT e.name, m.name {join} WHERE e.salary > m.salary", False,
                            "SELECT name, name FROM employees")
        return Question("For each employee who manages someone, give their name and their number of direct reports.",
                        f"SELECT m.name, COUNT(*) {join} GROUP BY m.id", False, "SELECT name, 1 FROM employees")


@register_domain
class RunningTotal(SqlPlumbing):
    """sql.running_total-v1 — cumulative sums with SUM() OVER (ORDER BY ...): per order of a
    month, (id, running total of quantity) by date then id (d1, d2 with a status filter),
    running revenue per order within a category (d3). Ordered."""

    id = "sql.running_total-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
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


@register_domain
class Revenue(SqlPlumbing):
    """sql.revenue-v1 — aggregate over a join: revenue (quantity * price, rounded to 2) per
    category, highest first (d1); for shipped orders in a year (d2); top customers by revenue
    with city filter (d3). Ordered."""

    id = "sql.revenue-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
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


@register_domain
class NthHighest(SqlPlumbing):
    """sql.nth_highest-v1 — the n-th highest value: the 2nd highest salary overall (d1), the
    n-th most expensive product's name (d2), the 2nd highest salary in each department that
    has at least two employees, as (department id, salary) (d3)."""

    id = "sql.nth_highest-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return make_sql_task(self.id, difficulty, rng, self.question)

    def question(self, rng: random.Random, difficulty: int) -> Question:
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
