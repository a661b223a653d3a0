"""The front door of the functions a waiting run's execution and the scheduler call (``wait``,
``settle``, ``timer``): each adapts its event to one call of the run lifecycle (``parley.runs``)."""
