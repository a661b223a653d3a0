"""Answering by reply (``interaction-format.md``, "Answering by reply", ``replies``).

The pure rules, with no store, clock or tool server:

- ``cadence``: when a conversation is read ("Bounds", reads of a conversation);
- ``rule``: how the reply rule reads an answer from a reply's words;
- ``taking``: what each message of one read is (an answer, a refusal, or passed over);
- ``telling``: what a party whose reply was refused is told, and whether.

And ``conversations``: joining, reading and telling on the lifecycle's store and ports.
"""
