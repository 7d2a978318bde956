"""Multi-table SQL questions: inner joins, anti-joins, self-joins, set operations, subqueries.

Each domain is one question generator; drawing, scoring and probes come from
:func:`posttrain.domains.sql._kit.sql_domain`.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import CATEGORIES, CITIES, DEPTS, Question, sql_domain


def _join(rng: random.Random, difficulty: int) -> Question:
    """Combining tables with INNER JOINs (two and three tables).

    INNER JOINs: distinct names of customers who ordered a product of a
    category (d1), + living in a city (d2), employee names with their department name for a
    department city (d3). Unordered."""
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


register_domain(sql_domain("sql.join-v1", _join, _join.__doc__))


def _anti_join(rng: random.Random, difficulty: int) -> Question:
    """Finding rows without a match (anti-joins with NOT IN subqueries).

    rows without a match: customers who never ordered (d1), customers who
    never ordered in a category (d2), products never ordered by customers of a city (d3)."""
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


register_domain(sql_domain("sql.anti_join-v1", _anti_join, _anti_join.__doc__))


def _self_join(rng: random.Random, difficulty: int) -> Question:
    """Joining a table to itself: employees with their managers.

    joining employees to their managers: (employee, manager) name pairs in
    a department (d1), employees earning more than their manager (d2), managers with their
    number of direct reports (d3)."""
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


register_domain(sql_domain("sql.self_join-v1", _self_join, _self_join.__doc__))


def _set_ops(rng: random.Random, difficulty: int) -> Question:
    """Set operations on query results: INTERSECT, EXCEPT, UNION.

    INTERSECT / EXCEPT / UNION: customer ids who ordered in both of two
    categories (d1), in one but not the other (d2), cities that have a customer or a department
    but not both (d3)."""
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


register_domain(sql_domain("sql.set_ops-v1", _set_ops, _set_ops.__doc__))


def _correlated(rng: random.Random, difficulty: int) -> Question:
    """Subqueries: scalar, correlated per row, and per-group maxima.

    subqueries: employees above the company average salary (d1), above
    their own department's average (d2, correlated), the top earner of each department with
    the department id (d3)."""
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


register_domain(sql_domain("sql.correlated-v1", _correlated, _correlated.__doc__))
