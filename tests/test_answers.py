"""The answer parser on realistic model outputs (exact letters, or None)."""
import pytest

from mvx_tasks.answers import extract_choice

OPTS4 = {"A": "Video A", "B": "Video B", "C": "Video C", "D": "Video D"}
TEXT4 = {"A": "two cups", "B": "a red ball", "C": "the dog runs away", "D": "nothing happens"}
YESNO = {"A": "Yes", "B": "No"}
FD = {"A": "The first video", "B": "The second video"}
DE = {"A": "Strengthens", "B": "Weakens"}
SEQ = {"A": "2, 1, 3", "B": "3, 1, 2", "C": "1, 3, 2"}

CASES = [
    ("B", OPTS4, "B"),
    ("b", OPTS4, "B"),
    ("(B)", OPTS4, "B"),
    ("B.", OPTS4, "B"),
    ("B)", OPTS4, "B"),
    ("[C]", OPTS4, "C"),
    ("**B**", OPTS4, "B"),
    ("  D  \n", OPTS4, "D"),
    ("Answer: B", OPTS4, "B"),
    ("answer: c", OPTS4, "C"),
    ("ANSWER: D", OPTS4, "D"),
    ("The answer is B.", OPTS4, "B"),
    ("The correct answer is (C).", OPTS4, "C"),
    ("The correct option is D", OPTS4, "D"),
    ("Final answer: A", OPTS4, "A"),
    ("**Final Answer:** (D)", OPTS4, "D"),
    ("<answer>B</answer>", OPTS4, "B"),
    ("<answer> C </answer>", OPTS4, "C"),
    ("<think>Maybe A... no, B fits the count.</think><answer>B</answer>", OPTS4, "B"),
    ("<think>A or D? The reference has two cups.</think>\nD", OPTS4, "D"),
    ("\\boxed{C}", OPTS4, "C"),
    ("Therefore the result is $\\boxed{A}$.", OPTS4, "A"),
    ("B. Video B", OPTS4, "B"),
    ("C: the third candidate has the same count", OPTS4, "C"),
    ("(A) because both show a person jumping", OPTS4, "A"),
    ("Video C", OPTS4, "C"),
    ("I choose option B.", OPTS4, "B"),
    ("My answer is d", OPTS4, "D"),
    ("Option C is correct because the motion matches.", OPTS4, "C"),
    ("The reference shows two cups. Video A shows three bags, Video B shows one ball, "
     "Video C shows two persons and Video D shows four cars. The answer is C.", OPTS4, "C"),
    ("Let me compare. A shows running, B shows swimming, C shows jumping.\nSo the best match is B.", OPTS4, "B"),
    ("A man is walking in the park. The best choice is (D).", OPTS4, "D"),
    ("a red ball", TEXT4, "B"),
    ("The dog runs away.", TEXT4, "C"),
    ("It shows two cups on a table", TEXT4, "A"),
    ("Yes", YESNO, "A"),
    ("no.", YESNO, "B"),
    ("No, they are different people.", YESNO, "B"),
    ("The second video", FD, "B"),
    ("Weakens", DE, "B"),
    ("The update strengthens the hypothesis.", DE, "A"),
    ("3, 1, 2", SEQ, "B"),
    ("B", SEQ, "B"),
    ("D", SEQ, None),  # not an option of a 3-option question
    ("", OPTS4, None),
    (None, OPTS4, None),
    ("I cannot determine this from the videos.", OPTS4, None),
    ("A or B", OPTS4, None),
    ("Both A and C could be right.", OPTS4, None),
    ("A man is riding a bike.", OPTS4, None),
    ("Answer: E", OPTS4, None),
    ("Sorry, I can't help with that.", YESNO, None),
]


@pytest.mark.parametrize("text,options,expected", CASES)
def test_extract_choice(text, options, expected):
    assert extract_choice(text, options) == expected


def test_at_least_forty_cases():
    assert len(CASES) >= 40
