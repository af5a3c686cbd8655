"""The freshness benchmark's paraphrase set (bench/freshness.py), written for issue 44: not LoCoMo's
wording, nor tests/paraphrase*.py's.

Each memory an agent might store is asked about in other words: the question shares no content word
with it (as recall analyzes words; freshness.py checks it before it runs). Around them:
- TRAPS, one or two per pair: memories that share a word with the question but answer something else
  ("The seafood restaurant on Pier 9 closed" beside "Who has a seafood allergy?"), or that share most
  of the answer's words and mean something else ("My brother got a job at the factory" beside "My
  brother lost his job at the factory");
- OTHERS: everyday memories that answer nothing.
"""

from __future__ import annotations

# (memory, the question that asks for it in other words, its traps)
PAIRS: list[tuple[str, str, list[str]]] = [
    (
        "I switched to a standing desk because my lower back kept aching.",
        "Why did they change their office furniture?",
        ["The office kettle is broken again.", "The furniture shop delivers on Saturdays."],
    ),
    (
        "Our twins start nursery school in the autumn.",
        "Are there toddlers in the household?",
        ["The household budget is due on the first.", "The twins in the film were played by one actor."],
    ),
    (
        "Tomas is allergic to shellfish and carries an epinephrine pen.",
        "Who has a seafood allergy?",
        ["The seafood restaurant on Pier 9 closed.", "Tomas is allergic to cats and keeps a lint roller."],
    ),
    (
        "The lease on my flat ends in June and I won't renew it.",
        "Is the user moving out of their apartment?",
        ["Moving boxes are stacked in the hallway.", "The apartment block has a new caretaker."],
    ),
    (
        "Mira got the job at the observatory and starts next month.",
        "Did anyone land a new position?",
        ["The position of the couch blocks the window.", "The new sofa arrives on Tuesday."],
    ),
    (
        "My father's heart surgery is scheduled for the ninth.",
        "Is a parent going into hospital?",
        ["The hospital car park charges by the hour.", "My father's garden won a prize at the fair."],
    ),
    (
        "I've cut out sugar and bread to lower my blood glucose.",
        "What diet is the user following?",
        ["The diet cola machine is empty.", "I've cut the hedge back to the fence."],
    ),
    (
        "The garage door opener stopped responding after the storm.",
        "What broke at home during the bad weather?",
        ["The weather app shows sun all week.", "Home insurance renews in May."],
    ),
    (
        "Kenji practises the violin for an hour before dinner.",
        "Does anyone play a string instrument?",
        ["The string lights in the garden need new bulbs.", "Kenji practises his speech for the wedding."],
    ),
    (
        "I owe Leo two hundred euros for the concert tickets.",
        "Who does the user have a debt to?",
        ["The national debt was on the news again.", "Leo lent the concert hall his piano."],
    ),
    (
        "We're driving to the coast for my cousin's wedding in August.",
        "Is there a family celebration coming up?",
        ["The family tree project is half done.", "The celebration cake was far too sweet."],
    ),
    (
        "My passport expires in three weeks and I haven't renewed it.",
        "Which travel document needs attention?",
        ["The travel pillow is in the closet.", "My passport photo is from when I was twenty."],
    ),
    (
        "Priyanka prefers to be called Pri.",
        "What nickname does she go by?",
        ["She goes to the gym at six.", "Priyanka prefers window seats on trains."],
    ),
    (
        "The quarterly report is due to the board on Friday.",
        "When must the financial summary be submitted?",
        ["The summary of the film was confusing.", "The board game night moved to Friday."],
    ),
    (
        "I stopped drinking alcohol in January.",
        "Is the user sober now?",
        [
            "The user is sober about the risks of the plan.",
            "I stopped the newspaper subscription in January.",
        ],
    ),
    (
        "Our dog Biscuit is terrified of fireworks.",
        "Which pet gets scared by loud bangs?",
        ["The pet shop sells grain-free food.", "Our dog Biscuit loves the beach."],
    ),
    (
        "Nadia is learning to code in Python at night school.",
        "Who is studying programming?",
        ["The programming on channel four changed.", "Nadia is learning to sail at the lake."],
    ),
    (
        "My brother lost his job at the factory in May.",
        "Is a sibling unemployed?",
        ["My brother got a job at the bakery in May.", "A documentary about sibling rivalry aired."],
    ),
    (
        "I can't eat anything with gluten; it makes me ill.",
        "Does the user have coeliac disease?",
        ["The disease spread through the tomato plants.", "I can't eat anything spicy after nine."],
    ),
    (
        "The car's brake pads were replaced last week.",
        "What maintenance did the vehicle get?",
        ["The vehicle registration office is downtown.", "The car's radio only picks up one station."],
    ),
    (
        "Lucia is expecting her first baby in March.",
        "Who is pregnant?",
        ["Lucia is expecting a parcel from Spain.", "The first crocuses came up in March."],
    ),
    (
        "I have a dentist appointment on Thursday at nine.",
        "When is the next checkup for the teeth?",
        ["The teeth of the old saw are dull.", "Thursday's yoga class starts at nine."],
    ),
    (
        "We moved the weekly team meeting to Wednesday afternoons.",
        "When does the group sync happen now?",
        ["The group chat is muted on weekends.", "The weekly bin collection moved to Monday."],
    ),
    (
        "Ahmed runs a small bakery near the train station.",
        "Which friend owns a shop that sells bread?",
        ["The shop on the corner sells newspapers.", "A friend lent me a drill for the shelves."],
    ),
]

OTHERS = [
    "The tomatoes on the balcony finally turned red.",
    "We watched the documentary about octopuses last night.",
    "The library fine was waived this time.",
    "The upstairs neighbours are repainting their hallway.",
    "A jigsaw of the harbour took us three evenings.",
    "The kettle descaler is under the sink.",
    "The bus timetable changes in September.",
    "We finished the crossword in record time.",
    "Grandpa's old radio still works.",
    "The recycling bins are collected on alternate weeks.",
]
