"""The audits that bound ε, in pipeline order: the sampled audit (:mod:`.sampled`, its pair search
from :mod:`dpaudit.search`, its draws from :mod:`.sampler`, the race that picks the finalists
(:mod:`.race`) and their validation on fresh samples (:mod:`.validate`)), run as group-sequential
looks (:mod:`.looks`, their α schedule :mod:`.schedule`); and the exact audit's search with an
exact objective (:mod:`.exact_search`). The public entry points are :func:`dpaudit.auditor.audit`
and :func:`dpaudit.auditor.exact_audit`."""
