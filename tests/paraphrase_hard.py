"""A harder paraphrase set, written for graphsvc (issue 28; not taken from LoCoMo or any benchmark).

Each memory is asked for in other words: the question shares no content word with it (as recall
analyzes words; tests/services/recall/test_fusion.py checks that), so keywords alone cannot find it. Around the answers
sit two kinds of traps:
- DISTRACTORS, everyday memories that answer no question but share ONE common word with some
  question ("the user", "new", "family", "home", "car", "work"...): the shape of the misses that issue
  28 reports, where one shared common word outranked the memory that means the answer;
- NEAR, near-duplicates of an answer that share most of its words but say something else ("Dad was
  tested for diabetes and is fine" beside "Dad was diagnosed with diabetes"), so a signal that only
  counts overlapping words, or a meaning that blurs them, ranks the wrong one first.

All are remembered in one graph in a fixed shuffled order (`ordered`), so windows mix answers and traps.
Used by tests/services/recall/test_fusion.py (the lexical checks), tests/services/test_embeddings.py (the targets on a real
Neo4j) and bench/paraphrase.py (the figures).
"""

from __future__ import annotations

import random

import numpy as np

from graphsvc.services.embeddings import Encoder, meaning_of

# (memory, question that asks for it in other words)
PAIRS = [
    ("I teach chemistry at a high school.", "What does the user do for work?"),
    ("I stopped eating meat last year.", "Is the user vegetarian?"),
    ("My daughter starts kindergarten in September.", "Does the user have kids?"),
    ("We closed on a two-bedroom flat in Lisbon last month.", "Did the user buy a new home?"),
    ("Dad was diagnosed with diabetes in the spring.", "Is anyone in the user's family ill?"),
    ("My Corolla failed its inspection because of the brakes.", "What is wrong with the user's car?"),
    ("I get seasick on boats, even on calm water.", "Can the user handle ferry trips?"),
    ("I run five kilometres before breakfast most mornings.", "How does the user stay fit?"),
    ("My sister is getting married in June.", "Is there a wedding in the family soon?"),
    ("I am allergic to penicillin.", "Which medicine must the user avoid?"),
    ("I've been learning the cello for two years.", "Is the user musical?"),
    ("Our cat Miso needs insulin shots twice a day.", "Does the user have a pet with a medical condition?"),
    ("I commute by bike along the canal.", "How does the user get to work?"),
    ("I moved from Chicago to Austin for the job.", "Where did the user relocate?"),
    ("I'm saving up for a trip to Patagonia next winter.", "What vacation is the user planning?"),
    ("My partner and I split up in March.", "Is the user still in a relationship?"),
    ("I can't sleep more than five hours a night lately.", "Does the user have insomnia?"),
    ("I was promoted to team lead in October.", "Did the user get a new position at work?"),
    ("Our basement flooded after the storm.", "What damage did the user's house suffer?"),
    ("I only drink decaf after noon.", "How does the user limit caffeine?"),
    ("My grandmother turns ninety on Saturday.", "Which relative has a big birthday coming up?"),
    ("I sold my motorcycle to pay off the credit card.", "How did the user clear their debt?"),
    ("I'm training for the Berlin marathon.", "Which race is the user preparing for?"),
    ("I volunteer at the food bank every Sunday morning.", "What charity work does the user do?"),
    ("My laptop screen cracked when I dropped it.", "Which device did the user damage?"),
    ("I finished my nursing degree in May.", "What qualification did the user earn recently?"),
    ("We're expecting twins in the autumn.", "Is the user's family growing?"),
    ("I hate flying and always take the train instead.", "How does the user prefer to travel?"),
    ("My landlord won't fix the broken heater.", "What problem does the user have with their rental?"),
    ("I speak Portuguese with my mother.", "What language does the user use at home?"),
    ("I bake bread from scratch every weekend.", "What is the user's hobby in the kitchen?"),
    ("My brother lives in Melbourne.", "Does the user have a sibling abroad?"),
    ("I lost my wallet on the tram yesterday.", "What did the user misplace?"),
    ("My knee surgery is scheduled for the 3rd.", "When is the user's operation?"),
    ("I quit smoking six months ago.", "Does the user use tobacco?"),
    ("We adopted a rescue greyhound.", "Did the user's family get a new dog?"),
    ("I'm on night shifts at the hospital.", "What hours does the user keep?"),
    ("I'm colour-blind, so red and green look the same to me.", "Does the user have a vision problem?"),
    ("My mortgage rate goes up in January.", "Will the user's home loan cost more?"),
    ("I drive an electric Kia.", "What kind of car does the user have?"),
    ("I'm terrified of spiders.", "What is the user afraid of?"),
    ("My son broke his arm at football practice.", "Which child got injured?"),
    ("I'm fluent in Japanese after living in Osaka.", "Which foreign language does the user know?"),
    (
        "I take the kids to swimming lessons on Tuesdays.",
        "What activity do the user's children have each week?",
    ),
    ("I can't eat gluten because of coeliac disease.", "Which food does the user avoid?"),
    ("We're repainting the nursery yellow.", "What home project is the user busy with?"),
]

# Everyday memories that answer no question; each shares one common word with some question.
DISTRACTORS = [
    "The user prefers replies in short bullet points.",
    "The user's timezone is Central European Time.",
    "The user asked for the report as a PDF.",
    "The user likes the new logo better than the old one.",
    "The user's favourite colour is green.",
    "The new coffee machine in the office makes terrible espresso.",
    "The new season of the cooking show starts Friday.",
    "A new bakery opened on the corner.",
    "Family photos from the beach are in the shared album.",
    "The family group chat is very noisy.",
    "Home internet drops out when it rains.",
    "The home page of the website loads slowly.",
    "The car park at the station is full by eight.",
    "The rental car had a scratch on the door.",
    "Work emails are archived after ninety days.",
    "The work printer is out of toner again.",
    "The kids' movie at the cinema was sold out.",
    "The house across the street is painted blue.",
    "The travel mug leaks from the lid.",
    "The language settings reset after the update.",
    "The dog park closes at sunset.",
    "The medicine cabinet needs a new lock.",
    "The kitchen tap drips at night.",
    "The vacation rental listing had the wrong photos.",
    "The relationship between the two teams improved.",
    "The birthday cake order is chocolate.",
    "The pet shop sells organic treats.",
    "The opening hours on the gym sign are wrong.",
    "The vision statement for the company was rewritten.",
    "The loan for the office equipment was approved.",
    "The children's section of the library was renovated.",
    "The food at the conference was cold.",
    "The project deadline moved to next week.",
    "The race results were posted online.",
    "The device list in the router shows twelve entries.",
    "The trip report needs two more photos.",
    "The child seat in the back is too small now.",
]

# Near-duplicates of answers: most of the words, another meaning (none answers a question).
NEAR = [
    "I teach a chemistry club at the library on weekends as a hobby.",
    "I stopped eating out last year to save money.",
    "My neighbour's daughter starts kindergarten in September.",
    "We looked at a two-bedroom flat in Lisbon last month but did not buy it.",
    "Dad was tested for diabetes in the spring and he is fine.",
    "My Corolla passed its inspection with new brakes.",
    "My sister went to a friend's wedding in June.",
    "I was tested for a penicillin allergy and I am not allergic.",
    "I was passed over for team lead in October.",
    "Our neighbour's basement flooded after the storm.",
    "I sold my motorcycle because I never rode it.",
    "My father quit smoking six months ago.",
    "My friend adopted a rescue greyhound.",
    "My brother visited Melbourne last year and came home.",
    "My son's friend broke his arm at football practice.",
    "My roommate is fluent in Japanese after living in Osaka.",
    "My mortgage rate stays fixed until 2030.",
    "I lost a bet on the tram yesterday.",
]

SEED = 28  # the shuffle's seed: the order is part of the set


def ordered() -> list[str]:
    """Every memory of the set in the order it is remembered (answers, distractors and near-duplicates
    interleaved, the same order every run)."""
    texts = [memory for memory, _ in PAIRS] + DISTRACTORS + NEAR
    random.Random(SEED).shuffle(texts)
    return texts


def by_cosine_alone(encoder: Encoder) -> tuple[int, int]:
    """How many answers a model puts first and in the top five among the set's memories by cosine alone
    (each question as recall embeds it: services/embeddings.meaning_of, then encode_query)."""
    texts = ordered()
    memories = np.array(encoder.encode(texts))
    ranks = []
    for memory, question in PAIRS:
        cosines = memories @ np.array(encoder.encode_query(meaning_of(question)))
        ranks.append(int((cosines > cosines[texts.index(memory)]).sum()))
    return sum(r == 0 for r in ranks), sum(r < 5 for r in ranks)
