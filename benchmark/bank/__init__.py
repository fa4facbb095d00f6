"""The bank's checks: the validator (`wearsim validate`), its authoring, duplicate, scene, proactive and semantic
rules, the bank's counts, its lockfile and its dataset card.
"""
