"""The report layer's words: everything virtbench says in sentences, by one rule each (pure).
"""
