"""E-commerce cart and checkout: ``tools.cart_checkout-v1``.

Trains: a shop API with hidden stock, prices and coupon terms — ``find_product(name)``,
``check_coupon(code)``, ``add_to_cart(product_id, quantity)``, ``apply_coupon(code)``,
``checkout()``. The shopping list names products; an item without enough stock must be
replaced by its named alternative (level ≥ 2); at level 3 two coupons are offered and the one
giving the lower total must be applied (percent vs fixed-with-minimum terms, read with
``check_coupon``). ``add_to_cart`` refuses more than the stock; ``checkout`` records the order
and decrements stock.

Difficulty: 1 = 1-2 items, no shortage, no coupon; 2 = 2-3 items, one shortage, one coupon;
3 = 3 items, one shortage, the better of two coupons.

Reward: validity² × (0.3·calls + 0.7·result·precision²·[all calls made]); ``result`` = mean of
``state_ok`` (the shop's state after the episode: order lines, coupon, total, stock, empty
cart) and ``answer_ok`` (the order total in cents).

Probes (≤ 0.05): the kit's set (:mod:`._kit`). Partial credit, not probes: buying the
out-of-stock item as listed, or applying the worse coupon, keeps only the calls part.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain
from ._kit import ApiDomain, chunk, Plan, S, tool

GOODS = ["steel water bottle", "cotton tote", "desk lamp", "notebook set", "usb-c cable", "wool socks",
         "coffee grinder", "yoga mat", "phone stand", "tea sampler", "bike light", "rain jacket"]


def _find(st, name):
    for pid, p in st["products"].items():
        if p["name"] == name:
            return {"product_id": pid, "price_cents": p["price"], "stock": p["stock"]}
    raise ValueError(f"no product named {name!r}")


def _check(st, code):
    if code not in st["coupons"]:
        raise ValueError(f"unknown coupon {code!r}")
    return st["coupons"][code]


def _add(st, product_id, quantity):
    if product_id not in st["products"]:
        raise ValueError(f"unknown product {product_id!r}")
    have = st["cart"].get(product_id, 0)
    if have + quantity > st["products"][product_id]["stock"]:
        raise ValueError(f"only {st['products'][product_id]['stock']} in stock")
    st["cart"][product_id] = have + quantity
    return {"cart": dict(st["cart"])}


def _total(st, code: str | None) -> int:
    sub = sum(st["products"][p]["price"] * q for p, q in st["cart"].items())
    c = st["coupons"].get(code) if code else None
    if not c:
        return sub
    if c["type"] == "percent":
        return sub - sub * c["value"] // 100
    return sub - c["value"] if sub >= c["min_total_cents"] else sub


def _apply(st, code):
    c = _check(st, code)
    if c["type"] == "fixed" and _total(st, None) < c["min_total_cents"]:
        raise ValueError("cart total below the coupon's minimum")
    st["coupon"] = code
    return {"total_cents": _total(st, code)}


def _checkout(st):
    if not st["cart"]:
        raise ValueError("cart is empty")
    total = _total(st, st["coupon"])
    for p, q in st["cart"].items():
        st["products"][p]["stock"] -= q
    st["orders"].append({"lines": dict(sorted(st["cart"].items())), "coupon": st["coupon"], "total": total})
    st["cart"], st["coupon"] = {}, None
    return {"order": len(st["orders"]), "total_cents": total}


ID = "tools.cart_checkout-v1"


def _tools(st: dict[str, Any]):
    q = {"type": "integer", "minimum": 1}
    return [tool("find_product", "Look a product up by exact name.", {"name": S}, _find, st),
            tool("check_coupon", "Terms of a coupon code.", {"code": S}, _check, st),
            tool("add_to_cart", "Add a quantity of a product to the cart.", {"product_id": S, "quantity": q}, _add, st),
            tool("apply_coupon", "Apply a coupon to the cart (one at a time).", {"code": S}, _apply, st),
            tool("checkout", "Place the order for the cart.", {}, _checkout, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    n = {1: rng.randint(1, 2), 2: rng.randint(2, 3), 3: 3}[difficulty]
    names = rng.sample(GOODS, n + 1)
    items, alt = names[:n], names[n]
    qty = {g: rng.randint(1, 3) for g in items}
    products = {}
    for g in names:
        products[f"p{rng.randint(1000, 9999)}{len(products)}"] = {
            "name": g, "price": rng.randint(300, 6000), "stock": rng.randint(4, 9)}
    short = rng.choice(items) if difficulty >= 2 else None
    pid = {p["name"]: k for k, p in products.items()}
    if short:
        products[pid[short]]["stock"] = rng.randint(0, qty[short] - 1) if qty[short] > 1 else 0
        products[pid[alt]]["stock"] = qty[short] + rng.randint(0, 3)
    buy = [(alt if g == short else g, qty[g]) for g in items]
    sub = sum(products[pid[g]]["price"] * q for g, q in buy)
    pct = rng.randint(5, 25)
    coupons = {f"SAVE{pct}": {"type": "percent", "value": pct},
               f"OFF{rng.randint(10, 99)}": {"type": "fixed", "value": rng.randint(300, 2000),
                                             "min_total_cents": rng.randint(1000, 6000)}}
    world = {"products": products, "coupons": coupons, "cart": {}, "coupon": None, "orders": []}
    codes = sorted(coupons)
    offered = [] if difficulty == 1 else ([rng.choice(codes)] if difficulty == 2 else codes)
    best = None
    if offered:
        probe = {**world, "cart": {pid[g]: q for g, q in buy}}
        usable = [c for c in offered if coupons[c]["type"] == "percent" or sub >= coupons[c]["min_total_cents"]]
        totals = {c: _total(probe, c) for c in usable}
        if len(offered) == 2 and len(set(totals.values())) < len(totals):
            return _plan(rng, difficulty)
        best = min(totals, key=totals.get) if totals else None
        if best is None:
            return _plan(rng, difficulty)
    lines = ", ".join(f"{qty[g]} x '{g}'" for g in items)
    prompt = f"Order {lines}."
    if short:
        prompt += f" If an item has too little stock, buy the same quantity of '{alt}' instead."
    if len(offered) == 1:
        prompt += f" Apply coupon {offered[0]}."
    elif offered:
        prompt += f" You hold coupons {offered[0]} and {offered[1]}: apply only the one giving the lower total."
    prompt += " Then check out and reply with the order total in cents."
    t1 = [("find_product", {"name": g}) for g in items]
    t1 += [("check_coupon", {"code": c}) for c in offered] if len(offered) == 2 else []
    turns = [t1] + ([[("find_product", {"name": alt})]] if short else [])
    tail = [("add_to_cart", {"product_id": pid[g], "quantity": q}) for g, q in buy]
    tail += ([("apply_coupon", {"code": best})] if best else []) + [("checkout", {})]
    turns += chunk(tail)
    probe_state = {**world, "cart": {pid[g]: q for g, q in buy}}
    answer = str(_total(probe_state, best))
    return Plan(prompt, world, turns, answer, public={"items": items})


DOMAIN = register_domain(ApiDomain(ID, _tools, _plan, description=__doc__, result="both"))
