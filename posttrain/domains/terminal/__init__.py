"""Terminal domains (family ``terminal``): tasks on a sandbox file tree with a shell tool.

Reorganising files, extracting and transforming data, fixing permissions, writing a script
that produces an output. The reward is the fraction of expected final-state predicates that
hold (:mod:`posttrain.verifiers.fs_state`), read from the episode's sandbox after it ends;
script tasks also run the policy's script on hidden inputs in a fresh sandbox.
"""
