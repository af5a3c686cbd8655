"""A paraphrase check written for graphsvc (not taken from LoCoMo): each memory is asked for in other
words, sharing no content word with it (tests/services/test_embeddings.py checks that), so keywords alone cannot
find it and a semantic signal can. Used by tests/services/test_embeddings.py and bench/paraphrase.py."""

from __future__ import annotations

# (memory, question that asks for it in other words)
PAIRS = [
    ("Dana adopted a small terrier from the animal shelter last spring.", "Who got a new puppy?"),
    ("The quarterly budget meeting moved to Thursday afternoon.", "When is the finance review scheduled?"),
    ("Priya cannot eat peanuts; they make her throat swell.", "Does anyone have a nut allergy?"),
    ("Marco flies to Tokyo on the morning of the 14th.", "What are the travel plans to Japan?"),
    ("The staging server ran out of disk space overnight.", "Why did the test machine crash?"),
    ("Lena prefers tea over coffee and drinks it without sugar.", "Which hot beverage does she like?"),
    ("The invoice from the printing vendor is still unpaid.", "Which bill is outstanding?"),
    ("Sam is learning Spanish with an app every evening.", "Who studies a foreign language?"),
    ("Our landlord is raising the rent by ten percent in March.", "Is the apartment getting more expensive?"),
    (
        "Grandma's hip surgery went well and she is home again.",
        "How did the operation on the elderly relative go?",
    ),
]
# Memories that answer none of the questions, remembered among them.
OTHERS = [
    "The car needs new tyres before winter.",
    "Ravi repainted the kitchen cabinets green.",
    "The book club reads a mystery novel this month.",
    "We planted tomatoes and basil in the garden.",
    "The wifi password changed after the router reset.",
    "Ana ran her first half marathon in two hours.",
]
