"""Human approval: a call to a ``requires_approval`` tool waits for a person.

``service.py`` creates, lists and decides requests; ``execution.py`` runs an
approved call exactly once and recovers calls a dead replica left behind;
``repository.py`` holds every query (the conditional UPDATEs that make each
transition happen once); ``binding.py`` says what one approval is for.
"""
