"""Recipe scaling with a nutrition API: ``tools.recipe_nutrition-v1``.

Trains: a two-stage lookup — ``get_recipe(name)`` (hidden servings and ingredient grams), then
``get_nutrition(ingredient)`` once per *distinct* ingredient (kcal per 100 g, hidden) — and
the arithmetic of scaling: kcal = Σ grams × (servings wanted / recipe servings) × kcal/100.

Difficulty: 1 = one recipe, 2-3 ingredients, as written; 2 = one recipe, 3-4 ingredients,
scaled; 3 = two recipes at different servings that share an ingredient (looked up once).

Reward: validity² × (0.3·calls + 0.7·answer·precision²·[all calls made]); the answer is the
total rounded to a whole kcal, accepted within ±1.

Probes (≤ 0.05): the kit's set (:mod:`._kit`). Penalised, not floored: a duplicate lookup
of the shared ingredient costs precision² (the calls part and the answer part).
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain
from ._kit import ApiDomain, number_score, Plan, S, tool

INGREDIENTS = ["oats", "milk", "banana", "honey", "rice", "lentils", "onion", "olive oil", "tomato",
               "chickpeas", "butter", "flour", "egg", "spinach", "cheese", "yogurt"]
DISHES = ["porridge", "dal", "risotto", "hummus bowl", "pancakes", "shakshuka", "stew", "salad"]


def _recipe(st, name):
    if name not in st["recipes"]:
        raise ValueError(f"no recipe {name!r}")
    return st["recipes"][name]


def _nutrition(st, ingredient):
    if ingredient not in st["kcal"]:
        raise ValueError(f"no data for {ingredient!r}")
    return {"kcal_per_100g": st["kcal"][ingredient]}


ID = "tools.recipe_nutrition-v1"


def _tools(st: dict[str, Any]):
    return [tool("get_recipe", "A recipe's servings and ingredient grams.", {"name": S}, _recipe, st),
            tool("get_nutrition", "kcal per 100 g of an ingredient.", {"ingredient": S}, _nutrition, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    kcal = {i: rng.randint(15, 880) for i in INGREDIENTS}
    recipes = {}
    for d in DISHES:
        ings = rng.sample(INGREDIENTS, rng.randint(2, 4) if difficulty < 3 else rng.randint(2, 3))
        recipes[d] = {"servings": rng.randint(2, 6), "ingredients": {i: rng.randrange(20, 400, 5) for i in ings}}
    dishes = rng.sample(DISHES, 2 if difficulty == 3 else 1)
    if difficulty == 3:
        shared = rng.choice(sorted(recipes[dishes[0]]["ingredients"]))
        r1 = recipes[dishes[1]]["ingredients"]
        if shared not in r1:
            r1.pop(next(iter(r1)))
            r1[shared] = rng.randrange(20, 400, 5)
    want = {d: (recipes[d]["servings"] if difficulty == 1 else rng.randint(1, 8)) for d in dishes}
    total = 0.0
    for d in dishes:
        r = recipes[d]
        total += sum(g * want[d] / r["servings"] * kcal[i] / 100 for i, g in r["ingredients"].items())
    distinct = sorted({i for d in dishes for i in recipes[d]["ingredients"]})
    ask = " and ".join(f"{want[d]} servings of {d}" for d in dishes)
    prompt = (f"How many kcal are in {ask}? Scale each recipe from its own servings; look each distinct "
              "ingredient up once. Reply with the total rounded to a whole number.")
    turns = [[("get_recipe", {"name": d}) for d in dishes], [("get_nutrition", {"ingredient": i}) for i in distinct]]
    return Plan(prompt, {"recipes": recipes, "kcal": kcal}, turns, str(round(total)), public={"dishes": dishes})


def _answer_score(task, got):
    return number_score(got, task.hidden["answer_value"], tol=1.0)


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, answer_score=_answer_score))
