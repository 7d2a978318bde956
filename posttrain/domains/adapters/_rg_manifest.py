"""placeholder"""
DATASETS = {}
SIZES = {}
DROPPED = {}
