"""The rules a reasoning run's tool loop applies (``reasoning-format.md``, "Tools"), as pure modules.

``naming`` (the names the model sees), ``offering`` (what a tool's offer holds, and its schema's
warnings), ``limits`` ("Limits on calls", and the failures and 429s of "Limits on time and failures"),
``results`` (what the model reads of a result, and the cut when it would not fit), ``budget`` (the
run's input tokens, and which step is the last), ``last_step`` (the calls so far as text) and
``endings`` ("When a tool-calling run cannot finish"). None of them does any I/O: the loop calls the
model and the tool servers, records the events and keeps these rules' state between steps.
"""
