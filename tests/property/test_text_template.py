"""A text output read as its template and numbers (dpaudit/output_values.py, text_template) gives
the text back exactly (a text without numbers is kept as it is): each ``#spec`` written from its number (``format(value, spec)``, Python's
own spelling for an empty spec, ``d`` as no decimals), ``\\#`` and ``\\\\`` unescaped. Texts are
drawn from the characters numbers are made of, so signs, points, exponents and leading zeros meet
in every arrangement."""

import re

from hypothesis import given, strategies as st

from dpaudit.output_values import text_template

_HOLE = re.compile(r"\\(.)|#([+]?(?:\.[0-9]+[fFeE]|d)?)", re.S)


def rebuilt(template: str, numbers: list) -> str:
    """The text a template and its numbers write."""
    left = iter(numbers)

    def one(m: re.Match) -> str:
        if m.group(1) is not None:
            return m.group(1)
        spec = m.group(2).replace("d", ".0f")
        value = next(left)
        return repr(value) if spec == "" else format(value, spec)

    text = _HOLE.sub(one, template)
    assert next(left, None) is None, "a number the template does not place"
    return text


@given(st.text(alphabet="0123456789.-+eE#\\ xy", max_size=40))
def test_the_template_and_its_numbers_give_the_text_back(text):
    template, *numbers = text_template(text)
    # a text without numbers is itself, unescaped
    assert (rebuilt(template, numbers) if numbers else template) == text


def test_examples_of_the_docstring():
    assert text_template("answer=1.25 (n=3)") == ("answer=# (n=#d)", 1.25, 3.0)
    assert text_template("no numbers") == ("no numbers",)
    assert text_template("05 5")[0] == "05 #d"  # a leading zero carries more than the value
    assert text_template("1.50")[0] == "#.2f"
