"""Answering by reply (``interaction-format.md``, "Answering by reply", ``replies``): the pure rules.

- :mod:`parley.replies.cadence`: when a conversation is read ("Bounds", reads of a conversation);
- :mod:`parley.replies.rule`: how the reply rule reads an answer from a reply's words;
- :mod:`parley.replies.taking`: what each message of one read is (an answer, a refusal, or passed over);
- :mod:`parley.replies.telling`: what a party whose reply was refused is told, and whether.

No store, clock or tool server here: the runs and the scheduler call these functions.
"""
