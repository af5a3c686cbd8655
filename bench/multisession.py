"""Questions whose answer is spread over sessions and joined only by a name the texts say.

One person's memories over twelve weekly sessions (7 April to 23 June 2025), remembered as an agent
stores what it is told: text, the session as a tag and its date as `occurredAt`, and no entity. 33
small stories lie across them: each is two or three memories in different sessions that only a name
joins ("My sister Dana moved to Porto in March" … weeks later "Dana says her flat has a balcony over
the Douro"), and one question that needs them all ("What is the view from my sister's new home?"). A
memory of a story often shares no word with its question: only the name it shares with another
memory of the story leads to it. Around them, 160 memories of everyday talk, some sharing the
questions' words ("My colleague's sister works in a bank in Porto"), and a partner, Alex, named in
many of them (a name that joins everything, so it should carry little). Written for graphsvc (issue
38), not from any benchmark's wording.

For each question: R@10 (the share of its memories among the first 10 recalled) and one-hit (at
least one of them there), and all-hit (all of them there). Asked twice: right after everything is
remembered (`before`: nothing embedded or extracted) and after the backlogs drained (`after`).

    .venv/bin/python bench/multisession.py [--seed 38]

In-process on its own local Neo4j unless GRAPHSVC_NEO4J_URI is set; no worker runs, so the script
drains the backlog between the two rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import statistics
import sys
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import neo4j_settings
from diary import drain, memory_at

from graphsvc.app import Services
from graphsvc.domain.models import RecallInput, RememberInput

SESSIONS, FIRST = 12, date(2025, 4, 7)


@dataclass(frozen=True)
class Story:
    question: str
    memories: tuple[str, ...]  # in the order they are told, each in a later session than the one before


STORIES = [
    Story(
        "What is the view from my sister's new home?",
        ("My sister Dana moved to Porto in March.", "Dana says her flat has a balcony over the Douro."),
    ),
    Story(
        "What damage has our beagle done around the house?",
        ("We adopted a beagle puppy and named him Biscuit.", "Biscuit chewed through a sofa cushion again."),
    ),
    Story(
        "Is there anywhere good to eat near the new office?",
        (
            "Our office is moving to a building on Marlow Street next month.",
            "Kenji swears by the ramen place on Marlow Street.",
        ),
    ),
    Story(
        "When will the billing system I'm leading go live?",
        (
            "I'm leading Project Heron at work, the new billing system.",
            "Heron's launch slipped to September because the payments vendor was late.",
        ),
    ),
    Story(
        "What treatment is my dentist planning?",
        (
            "My dentist is Dr. Amsel at the Riverside clinic.",
            "Dr. Amsel wants to replace my old filling in July.",
        ),
    ),
    Story(
        "How did the woman from accounting do in her race?",
        (
            "Greta from accounting is running the Edinburgh marathon.",
            "Greta finished in 3 hours 41 minutes, a personal best!",
        ),
    ),
    Story(
        "What should we pack for the long weekend away in May?",
        (
            "We booked the Ridgeway cabin for the long weekend in May.",
            "The Ridgeway cabin has no wifi, so bring board games and books.",
        ),
    ),
    Story(
        "Which team does my son play in his first match?",
        (
            "My son Oliver got into the under-12 football team.",
            "Oliver's opening fixture is against Hillcrest on the 14th.",
        ),
    ),
    Story(
        "Why did my Skoda fail its inspection?",
        ("I bought a used Skoda; I call it Zephyr.", "Zephyr failed the MOT because of worn brake pads."),
    ),
    Story(
        "What should I avoid cooking for Friday's dinner guest?",
        ("Lucia is coming over for dinner on Friday.", "Lucia is allergic to shellfish, remember that."),
    ),
    Story(
        "When is the auction of the charity I volunteer with?",
        (
            "I volunteer with the Harbour Trust, cleaning beaches on Sundays.",
            "The Harbour Trust holds its annual auction on 3 June.",
        ),
    ),
    Story(
        "What deadline did our landlord give us?",
        (
            "Our landlord, Mr. Pemberton, is selling the building.",
            "Pemberton gave us until August to decide whether we buy the flat.",
        ),
    ),
    Story(
        "Where is my brother's band performing next?",
        (
            "My brother plays drums in a band called Kestrel.",
            "Kestrel are playing the Leadmill on June 21st.",
        ),
    ),
    Story(
        "Can our neighbour still water the plants while we're on holiday?",
        (
            "Our neighbour Mrs. Ito waters the plants whenever we travel.",
            "Mrs. Ito is in hospital after a fall and will be there for weeks.",
        ),
    ),
    Story(
        "What is happening to the manager who approved my month in Lisbon?",
        (
            "My manager Tessa approved my request to work from Lisbon in July.",
            "Tessa is leaving the company at the end of May.",
        ),
    ),
    Story(
        "Can I get gluten-free bread at the bakery on our corner?",
        (
            "The bakery on our corner is called Copperleaf.",
            "Copperleaf now bakes a gluten-free sourdough on Thursdays.",
        ),
    ),
    Story(
        "What present should I get for my aunt's 80th?",
        (
            "Aunt Marguerite is turning 80 in June.",
            "Marguerite would love a framed photo of the old farmhouse.",
        ),
    ),
    Story(
        "What will happen to my pottery course?",
        (
            "I signed up for a pottery course at the Alder Street studio.",
            "The Alder Street studio is closing; its classes move online after May.",
        ),
    ),
    Story(
        "Has my accountant filed the return yet?",
        ("My accountant is Raj Mehta.", "Raj sent in the tax forms on 2 May; a refund should follow."),
    ),
    Story(
        "When does my parents' cruise depart?",
        (
            "Mum and Dad booked a Norwegian coastal voyage on the Nordlys.",
            "The Nordlys sails from Bergen on 12 June.",
        ),
    ),
    Story(
        "What's wrong with the cat?",
        (
            "Our cat Fig has been limping since Sunday.",
            "The vet said Fig sprained a paw and needs two weeks of rest.",
        ),
    ),
    Story(
        "What did the robotics company offer me?",
        ("I had a second interview at Halden Robotics.", "Halden came back with the role and a 15% raise."),
    ),
    Story(
        "Where are we staying for the hiking week?",
        (
            "We're planning a hiking week in Keswick.",
            "The guesthouse in Keswick cancelled on us.",
            "We found a farm cottage outside Keswick instead.",
        ),
    ),
    Story(
        "When do I go running with my running partner now?",
        (
            "Ingrid and I go running together on Tuesday evenings.",
            "Ingrid changed shifts, so she can only make Thursday mornings from now on.",
        ),
    ),
    Story(
        "What colour is my daughter's new school uniform?",
        (
            "Our daughter Maya starts at Willowbrook Primary in September.",
            "Willowbrook's uniform is navy with a yellow tie.",
        ),
    ),
    Story(
        "By when must I return the borrowed camping stove?",
        (
            "Pedro lent me his camping stove for the festival.",
            "Pedro flies to Chile on 30 May for three months.",
        ),
    ),
    Story(
        "What does the client I took over from Simon need?",
        (
            "I'm taking over the Brightwater account from Simon.",
            "Brightwater wants the proposal revised by Monday.",
        ),
    ),
    Story(
        "How much will the plumber charge for the boiler?",
        (
            "The plumber we trust is Ferris; he's fixed everything so far.",
            "Ferris quoted £450 to replace the valve.",
        ),
    ),
    Story(
        "When do we fly out for our anniversary trip?",
        (
            "For our anniversary we're going to Lake Bled.",
            "Flights to Ljubljana for Bled are booked for 20 June.",
        ),
    ),
    Story(
        "Which novel is my book club reading next?",
        (
            "Quinn runs the book club I joined at the library.",
            "Quinn picked 'The Remains of the Day' for June.",
        ),
    ),
    Story(
        "What is my niece doing after university?",
        (
            "My niece Ellie graduates from Leeds in July.",
            "Ellie accepted a job offer from the BBC in Salford.",
        ),
    ),
    Story(
        "What time is Dad's birthday dinner now?",
        (
            "We booked Saffron for Dad's birthday dinner.",
            "Saffron moved our table to 8pm because of a private event.",
        ),
    ),
    Story(
        "Where is my partner's race?",
        ("My partner Alex is training for a triathlon.", "Alex's triathlon is on 6 July at Windermere."),
    ),
]

# Everyday talk around the stories: some share the questions' words, many name Alex.
OTHERS = """
My colleague's sister works in a bank in Porto.
The river walk was lovely this morning.
Our old sofa is still the most comfortable seat in the house.
I need new brake pads for my bike too.
I'm allergic to pollen, so spring is hard.
The dentist's waiting room was packed today.
Alex made pancakes for breakfast.
Alex and I watched a documentary about octopuses.
Alex thinks we should repaint the hallway.
Alex's mother called to ask about Easter.
Alex fixed the leaking tap in the bathroom.
Alex booked a table at the Greek place for Saturday.
Alex is annoyed that the bins weren't collected.
Alex found a cheaper phone contract.
Alex and I argued about the thermostat again.
Alex bought new running shoes.
Alex has a cold and stayed home.
Alex wants a dog but we already have enough to do.
Alex started a sourdough starter in the kitchen.
Alex's brother is visiting next week.
Alex and I walked to the market.
Alex ordered the wrong size curtains.
Alex is reading a thriller set in Oslo.
The new office coffee machine is terrible.
I spent the evening sorting old photos.
I should call the bank about the mortgage.
The train was delayed by forty minutes.
It rained all day, so we stayed in.
I finally cleared my email inbox.
We need to buy a birthday card for Jo.
The garden needs weeding before the weekend.
I made a lentil curry that was too spicy.
My knee is aching after the stairs at work.
The school sent a letter about the trip to the zoo.
I renewed my passport online.
The heating came on by itself at 3am.
A parcel arrived for the neighbours.
We watched the football, terrible match.
I tried a new yoga class at lunchtime.
Work was quiet, so I caught up on reports.
The car needs washing after the muddy lane.
I ordered a new lamp for the study.
My phone screen cracked when I dropped it.
We had friends over for a barbecue.
I started learning Spanish on an app.
The cinema was nearly empty on Tuesday.
I forgot my umbrella and got soaked.
I cooked a big pot of chilli for the week.
The hotel for the conference is booked.
We cleaned out the garage at last.
The printer at work is jammed again.
My manager praised the quarterly report.
I need to book a haircut.
We signed up for a broadband upgrade.
I went to a talk about urban beekeeping.
The cat next door keeps visiting our garden.
I baked banana bread with the kids.
The water bill was higher than expected.
I sold the old bike online.
Our internet went down for an hour.
I planted tomatoes in the greenhouse.
The library had a sale of old books.
We spent Sunday at the seaside.
I got a flu jab at the pharmacy.
The boiler made a strange noise this morning.
I read the news and felt gloomy.
We tried a new board game with friends.
My brother called about our parents' anniversary.
The kids have a school concert next month.
I bought a plant for the living room.
The meeting ran over by an hour.
I cycled to work for the first time this year.
Our holiday photos finally got printed.
I'm thinking about a new laptop.
The weather forecast says a heatwave is coming.
I had a long chat with an old school friend.
We visited a castle on Saturday.
I fixed the wobbly table leg.
The supermarket was out of oat milk.
I wrote a thank-you note to my teacher from years ago.
I need to renew the car insurance.
My sister sent a funny video of her cat.
The new neighbours introduced themselves.
I went swimming at the leisure centre.
We ordered pizza and watched a film.
I spent ages on hold with the airline.
I cleaned the windows while it was sunny.
The kids built a den in the living room.
I'm trying to drink less coffee.
We went to a friend's wedding in the countryside.
The post office queue was enormous.
I made a spreadsheet of our monthly spending.
A fox was in the garden at dusk.
I replaced the smoke alarm battery.
Work announced a new hybrid working policy.
I bought a second-hand guitar.
The landlord of the pub remembered my name.
We walked along the canal to the next village.
I had a headache all afternoon.
The team lunch was at a Thai restaurant.
I finally watched the film everyone talks about.
I signed a birthday card at work for Priya.
My parents are redecorating their kitchen.
I found my old diary from school.
The dog from upstairs barked all night.
We booked a table for brunch on Sunday.
I returned the library books late again.
The bus route changed without notice.
I got a parking ticket outside the clinic.
The plumber next door was drilling all morning.
I tried cold-water swimming and hated it.
My cousin is getting married in Greece.
I bought a new kettle; the old one leaked.
The kids lost a tooth each this week.
We had a power cut during dinner.
I started a course on photography.
The recycling bins were full again.
I volunteered to organise the office party.
My uncle sent us a box of apples.
I stayed late to finish a presentation.
We met the new vicar after church.
The gym changed its opening hours.
I booked an eye test for next week.
The flowers on the balcony are blooming.
I spent the afternoon at the museum.
My friend recommended a podcast about history.
We planned the kids' summer activities.
I repaired a puncture on my bike.
The shop gave me the wrong change.
I walked home through the park.
The cake I made for the bake sale sold out.
I'm saving up for a new sofa.
A neighbour asked to borrow our ladder.
We watched the sunset from the hill.
The doctor's surgery has a new booking system.
I lost my keys and found them in the fridge.
Our train tickets for the summer are booked.
I sorted the recycling and the compost.
I had a video call with the team in Berlin.
The kids' football training moved to Wednesdays.
I tried a new recipe for fish tacos.
The council is resurfacing our road.
I caught up with my old flatmate over lunch.
We bought a new duvet for the spare room.
I wrote a long email to my grandmother.
The wind knocked over the garden chairs.
I listened to a concert on the radio.
We went strawberry picking.
I finished a jigsaw puzzle of 1000 pieces.
The office is closed on the bank holiday.
I got a new prescription for my glasses.
I walked the dog for the neighbours.
Alex and I made a list of chores.
Alex's car is in the garage for a service.
Alex found our wedding album in the loft.
Alex and I booked a weekend in Bath.
Alex painted the fence blue.
Alex and I disagreed about the holiday budget.
""".strip().splitlines()


def memories(seed: int = 38) -> tuple[list[tuple[int, str]], list[list[int]]]:
    """Every memory as (session, text) in the order remembered, and each story's memories' positions.
    A story's memories go to distinct sessions, in order; the everyday talk is spread over all."""
    rng = random.Random(seed)
    told: list[tuple[int, str, int | None]] = [(rng.randrange(SESSIONS), text, None) for text in OTHERS]
    for n, story in enumerate(STORIES):
        sessions = sorted(rng.sample(range(SESSIONS), len(story.memories)))
        told += [(s, text, n) for s, text in zip(sessions, story.memories, strict=True)]
    rng.shuffle(told)
    told.sort(key=lambda t: t[0])  # by session, shuffled within it
    where: list[list[int]] = [[] for _ in STORIES]
    for position, (_, _, story) in enumerate(told):
        if story is not None:
            where[story].append(position)
    return [(s, text) for s, text, _ in told], where


async def ask(memory: Any, graph: str, ids: list[str], where: list[list[int]]) -> dict[str, float]:
    r10, one, every = [], [], []
    for story, positions in zip(STORIES, where, strict=True):
        wanted = {ids[p] for p in positions}
        result = await memory.recall(RecallInput(query=story.question, graph=graph, limit=10))
        found = len(wanted & {m.id for m in result.memories[:10]})
        r10.append(found / len(wanted))
        one.append(float(found > 0))
        every.append(float(found == len(wanted)))
    return {"R@10": statistics.mean(r10), "one-hit": statistics.mean(one), "all-hit": statistics.mean(every)}


async def run(settings: Any, seed: int) -> None:
    settings.deadline_s = 300  # a cold server on a busy machine
    services = Services.build(settings)
    await services.start()
    memory = memory_at(services, lambda: datetime.now(UTC))
    told, where = memories(seed)
    graph = f"sessions-{secrets.token_hex(3)}"
    try:
        inputs = [
            RememberInput(
                text=text,
                tags=[f"session_{s + 1}"],
                occurredAt=(FIRST + timedelta(7 * s)).isoformat(),
                graph=graph,
            )
            for s, text in told
        ]
        ids = [r.id or "" for r in await memory.remember_many(inputs)]
        print(
            f"{len(told)} memories over {SESSIONS} sessions, {len(STORIES)} questions ({sum(map(len, where))} answers)"
        )
        rows = {"before": await ask(memory, graph, ids, where)}
        await drain(services)
        rows["after"] = await ask(memory, graph, ids, where)
        print(f"{'':40}{'R@10':>9}{'one-hit':>9}{'all-hit':>9}")
        names = {"before": "before: nothing embedded or extracted", "after": "after: the backlogs drained"}
        for label, got in rows.items():
            print(f"{names[label]:40}" + "".join(f"{got[k]:>9.3f}" for k in ("R@10", "one-hit", "all-hit")))
    finally:
        await memory.close()
        await services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=38)
    args = parser.parse_args()
    with neo4j_settings() as settings:
        asyncio.run(run(settings, args.seed))


if __name__ == "__main__":
    main()
