"""Science domains: physical quantities with units (:mod:`posttrain.verifiers.units`), chemistry
and solutions. Modules: ``mechanics`` (unit_convert, kinematics, projectile, newton, energy,
work_power, density, momentum), ``chemistry`` (temperature, ideal_gas, molar_mass, balance),
``solutions`` (half_life, ph, dilution). ``_kit`` holds the shared ``<number> <unit>`` checker
and :func:`quantity_domain`.
"""

from . import chemistry, mechanics, solutions  # noqa: F401  (registration side effects)
