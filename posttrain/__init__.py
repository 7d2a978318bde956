"""posttrain: post-train a fixed foundation model with RL on verifiable tasks across many domains.

See DESIGN.md in the repository's shared folder for the layers and contracts, and README.md
for the two commands that set up and run everything.
"""

__version__ = "0.1.0"
