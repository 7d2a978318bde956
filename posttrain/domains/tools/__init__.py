"""Tool-calling domains (family ``tools``): functions given as JSON schemas, called by the policy.

Single calls, parallel calls, multi-step calls with state, dependent lookup chains. The values
behind every function live in the task's hidden data; see :mod:`posttrain.domains.tools._api`
for the shared scoring (call validity, arguments, order, final state or answer).
"""
