"""Output kinds: detect what a mechanism returns, validate every output, encode it as numbers.

A mechanism may return (docs/ARCHITECTURE.md#a-mechanism): a real scalar, an integer or a hashable
category, a bool, a fixed-length numeric vector, or ``None``. The kind is detected from the first
batch of outputs (or taken from the declaration ``@dpaudit.mechanism(output=...)``), and every
later batch is checked against it. NaN, +inf and −inf are output values like any other (atoms of
the output space: a mechanism that returns NaN on one dataset and numbers on its neighbour leaks
which one it ran on). A mechanism that changes the type or the length of its output between calls,
or returns something unhashable where a category is expected, raises
:class:`~dpaudit.errors.MechanismError` naming the offending output and the dataset.

Encoding (what the estimators see):

=====================  ===========================================================================
kind                   encoded batch
=====================  ===========================================================================
``REAL``               float64 array (n,) of the values
``DISCRETE`` integer   float64 array (n,) of the integer values (all within ±2**53, so exact)
``DISCRETE`` category  float64 array (n,) of codes 0, 1, 2, ... in order of first appearance
``BOOL``               float64 array (n,) of 0.0 / 1.0
``NONE``               float64 array (n,) of 0.0
``VECTOR``             float64 array (n, d)
``MIXED``              float64 array (n, 2 + W): skeleton code, length, the W first elements
=====================  ===========================================================================

``MIXED`` holds numeric tuples / lists of varying length, or mixed with ``None`` (an SVT answering
``(index, noisy value)`` or ``None``; a list of positive indices), and real numbers mixed with
``None`` (a value or no answer), each number encoded as the 1-tuple ``(v,)``. Each output is split into its
discrete *skeleton* — the integers and bools it holds, with every float replaced by a marker, and
its length (``None`` and ``[]`` are skeletons of their own) — coded 0, 1, 2, ... in order of first
appearance (``None`` and ``[]``, the two spellings of "no answer", share one code), and its
elements: column 0 is the skeleton code, column 1 the length, column 2 + j
element j as a number (NaN past the end), for j below W (the one length of a first batch whose
outputs all have it, at least :data:`MIN_POSITIONS`; else :data:`MAX_POSITIONS`); integers, bools and
texts past W stay in the skeleton, and a float past W is the mechanism's ERROR (the skeleton would
show only that a number is there).

**Forms.** An output's form is released with its values, and audited with them
(:func:`dpaudit.output_values.form_of`): its type (``3`` and ``3.0``, a numpy float64 and a Python
float, a tuple and a list), an array's dtype, shape and memory layout (C, Fortran, strided), a
numpy time's unit, a dict's key order, a set's iteration order (``{1, 9}`` built as 1, 9 or as
9, 1 lists as ``[1, 9]`` or ``[9, 1]``). A mechanism that returned ``3`` on D and ``3.0`` on D′
leaked which one it ran on, and was audited as one value; so did each of those. A NaN's sign is
not audited (arithmetic makes −NaN on x86 beside ``np.nan``'s +NaN: a correct mechanism returns
both).
The first batch fixes the usual form (its most common); a number or a vector of another form
is encoded as NaN (one atom: "a value of another form"; the usual form's values keep their
order), and a category or a MIXED skeleton met in another form than the one it was first met in
is a code of its own (shown as ``3 as float``). An encoding of a post-processing stays sound;
outputs of one form throughout (every mechanism returning float64, the batch arrays) are encoded
exactly as before, at the cost of one comparison per batch.

A complex number is audited as the pair (Re z, Im z), a complex vector as (Re z₀, Im z₀, Re z₁, …)
(as categories almost every value would be seen once, and no event could have power).

Text that spells numbers (``f"{x:.3f}"``, ``str(x)``) is audited as those numbers, and JSON text
of objects or arrays (``json.dumps({"count": x})``) as its numbers too, when every output
of the first batch parses (a later output that does not is an error; declare ``output="discrete"``
to audit the texts as categories). Other texts whose first batch holds numbers and is mostly
distinct (at least :data:`dpaudit.output_values.TEMPLATE_MIN_TEXTS` texts, more than half of them distinct: log lines,
formatted reports), or whose smaller first batch (a one-call mechanism's first output) spells real
numbers (a fractional part or an exponent) in every text, are read as templates:
``"answer=1.25 (n=3)"`` as the labelled tuple
``("answer=# (n=#d)", 1.25, 3.0)``, audited as MIXED with the template in the skeleton. A text
that spells a number, and a ``Decimal`` (as its text), is such a template too: each number keeps how
it is written (:func:`dpaudit.output_values.spelling`: ``#`` for Python's own spelling, ``#d``,
``#.3f``; as written where no format gives it back), so ``"05"`` and ``"5"``, or ``Decimal("1.0")``
and ``Decimal("1.00")``, stay two outputs; JSON text is such a template too (its key order,
whitespace, repeated keys and ``1`` against ``1.0`` are kept). As categories, a released number written as text or as a Decimal was seen once per value, and
no event had power. Parsing is post-processing, and one that loses nothing, so the bounds stay
sound.

Nested lists, tuples, arrays and dicts (``[[a, b], [c, d]]``, ``(index, array)``, a dict of lists)
are audited as the tuple of their leaves, in order; where the first nested batch shows outputs of
several shapes (``[[1], [2, 3]]`` and ``[[1, 2], [3]]``), each nested output's shape leads as a
text, so where the boundaries fall is audited too (a flat sequence such as ``[]`` never gets one:
every output is encoded alike whatever else its batch holds).

Times are audited as seconds since 1970-01-01 (a ``date`` as its day number), durations as seconds,
and a pandas or polars Series (anything with ``to_numpy``) as its values, flattened, a DataFrame
as the dict of its columns (a name, an index of its own or a time zone is refused);
as categories each time was seen once, and a table was an unhashable output. A time holding more
than those seconds (a zone other than UTC, ``fold=1``, numpy digits below a microsecond, microseconds
a double cannot hold) is refused (:mod:`dpaudit.output_values`): the seconds would hide the rest.

A dataclass is audited as the dict of its fields, a namedtuple as its tuple.

Only plain values are audited (:func:`dpaudit.output_values.plain_outputs`): numbers (Python's and
numpy's), texts and bytes, None, times, ``Decimal`` and ``Fraction``, and tuples, lists, dicts,
sets and numpy arrays of them, plus the conversions above whose result is all a value holds (a
dataclass or a namedtuple without attributes of their own, a pandas or polars table, a torch or
jax array). Any other object, or a subclass of a plain type (a float carrying an attribute), is an
error that says so: an audit of its repr or of its float would be an audit of part of the release
only, and a mechanism could hide the exact answer in the rest. A text or bytes output holds at
most :data:`~dpaudit.output_values.MAX_TEXT` characters, a batch's outputs at most
:data:`~dpaudit.output_values.MAX_BATCH_TEXT` in all (an output is a release, not a log).

A dict is audited as the tuple of its values in the order of its keys, sorted (the first dict's
keys; every later dict must have the same keys; the order it was built in is its form): a dict of numbers is a vector whose coordinates
events name by key (``output['count'] ≥ 3``), other dicts are what their tuples are. A dict whose
keys vary between calls (``{key: noisy count}`` for the keys a partition selection releases) is
``MIXED``, each dict the tuple of its items ``(k₁, v₁, k₂, v₂, …)`` in key order (numbers by value,
then other keys by type and repr), with :data:`MAX_POSITIONS` positions: integer and text keys are
in its skeleton, number keys among its elements, so which keys were released is audited. That
reading is chosen by the first dict batch (several key sets, or empty dicts only: an empty dataset
releases no key) or by declaring ``output="mixed"``; a later dict with other keys than a first
batch of one key set is an error that says so.

Integers beyond ±2**53, which float64 would merge with their neighbours (2**60 and 2**60 + 1 are
one double), are categories: a batch holding one makes the kind a category, audited exactly on its
codes (a later batch that brings the first one after smaller integers is an error saying so). A
numeric array of any shape is audited as its flattened vector (C order: element [i, j] of an r × c
matrix is coordinate i·c + j).

``NONE`` and ``BOOL`` widen to a category when a later output is another hashable scalar
(``None`` keeps code 0, ``False``/``True`` keep 0/1), so a mechanism answering ``None`` on one
dataset and an index on another is audited, not rejected. A REAL kind accepts ints among its floats (as another form, above).
Mixing a number with ``None`` or integers with other hashables gives categories; a float mixed
with a non-number, or a bool mixed with a number, is a type change. Numeric sequences of several
lengths, or with ``None``, are ``MIXED`` (declare ``output="mixed"`` when the first batch might
show only one length); a fixed length seen first and another one later is a length change.

=================  =================================================================================
module             idea
=================  =================================================================================
``schema``         detection: :class:`OutputSchema`, the element classes of an output, the kind of a
                   batch
``normalise``      normalisation: each form a mechanism may return read as the plain values it holds
``encoder``        encoding: :class:`OutputEncoder` (normalise, detect, accept, encode) and the
                   MIXED skeletons
=================  =================================================================================

The pure functions on single values are in :mod:`dpaudit.output_values`.
"""

from __future__ import annotations

# REAL_MARK and EXACT_INT: public as before, outside __all__ (tests import REAL_MARK from here)
from dpaudit.outputs.encoder import REAL_MARK, OutputEncoder
from dpaudit.outputs.schema import EXACT_INT, MAX_POSITIONS, MIN_POSITIONS, OutputSchema

__all__ = ["OutputSchema", "OutputEncoder", "MIN_POSITIONS", "MAX_POSITIONS"]
