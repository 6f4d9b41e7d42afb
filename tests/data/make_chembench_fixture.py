# ruff: noqa: RUF001  (Unicode minus, multiplication signs and dashes are what is tested)
"""Writes chembench_fixture.json: questions written for this fixture (not ChemBench's) and 120
hand-written completions in the styles models answer in, each with the answer a careful human
reads from it (null: none can be read) and whether it is a refusal.

python tests/data/make_chembench_fixture.py   (the JSON is committed; rerun after editing)
"""

import json
from pathlib import Path

Q = {
    "mcq4": {
        "name": "fx_mcq4",
        "uuid": "fx-mcq4",
        "metrics": ["multiple_choice_grade"],
        "keywords": ["polymer-chemistry", "requires-reasoning", "difficulty-basic"],
        "examples": [
            {
                "input": "To double the rate of radical polymerization, how must the initiator concentration change?",
                "target_scores": {"doubled": 0, "quadrupled": 1, "tripled": 0, "halved": 0},
            }
        ],
    },
    "mcq_multi": {
        "name": "fx_mcq_multi",
        "uuid": "fx-multi",
        "metrics": ["multiple_choice_grade"],
        "keywords": ["safety", "requires-knowledge", "difficulty-basic"],
        "examples": [
            {
                "input": "Which of these are oxidizers?",
                "target_scores": {
                    "potassium permanganate": 1,
                    "ethanol": 0,
                    "hydrogen peroxide": 1,
                    "sodium chloride": 0,
                },
            }
        ],
    },
    "mcq9": {
        "name": "fx_mcq9",
        "uuid": "fx-mcq9",
        "metrics": ["multiple_choice_grade"],
        "keywords": ["organic-chemistry", "requires-knowledge", "difficulty-advanced"],
        "examples": [
            {
                "input": "Which reagent converts a primary alcohol to an aldehyde without over-oxidation?",
                "target_scores": {
                    "KMnO4": 0,
                    "CrO3/H2SO4": 0,
                    "NaBH4": 0,
                    "LiAlH4": 0,
                    "H2/Pd": 0,
                    "O3": 0,
                    "HNO3": 0,
                    "H2O2": 0,
                    "PCC": 1,
                },
            }
        ],
    },
    "num_pos": {
        "name": "fx_num_pos",
        "uuid": "fx-num-pos",
        "metrics": ["exact_str_match", "mae", "mse"],
        "keywords": ["physical-chemistry", "requires-calculation", "difficulty-basic"],
        "examples": [{"input": "What is the molar mass of NaCl in g/mol?", "target": "58.44"}],
    },
    "num_sci": {
        "name": "fx_num_sci",
        "uuid": "fx-num-sci",
        "metrics": ["exact_str_match", "mae", "mse"],
        "keywords": ["physical-chemistry", "requires-calculation", "difficulty-advanced"],
        "examples": [
            {"input": "What is [H+] of a solution at pH 2.92, in mol/L?", "target": "0.0012"}
        ],
    },
    "num_neg": {
        "name": "fx_num_neg",
        "uuid": "fx-num-neg",
        "metrics": ["exact_str_match", "mae", "mse"],
        "keywords": ["thermochemistry", "requires-calculation", "difficulty-basic"],
        "examples": [
            {
                "input": "What is the standard enthalpy of formation of liquid water in kJ/mol?",
                "target": "-285.8",
            }
        ],
    },
    "num_zero": {
        "name": "fx_num_zero",
        "uuid": "fx-num-zero",
        "metrics": ["exact_str_match", "mae", "mse"],
        "keywords": ["physical-chemistry", "requires-reasoning", "difficulty-basic"],
        "examples": [{"input": "What is the dipole moment of CO2 in debye?", "target": "0"}],
    },
    "num_int": {
        "name": "fx_num_int",
        "uuid": "fx-num-int",
        "metrics": ["exact_str_match", "mae", "mse"],
        "keywords": ["nmr", "requires-reasoning", "difficulty-basic"],
        "examples": [{"input": "How many 13C NMR signals does ethyl acetate show?", "target": "4"}],
    },
    "num_big": {
        "name": "fx_num_big",
        "uuid": "fx-num-big",
        "metrics": ["exact_str_match", "mae", "mse"],
        "keywords": ["physical-chemistry", "requires-calculation", "difficulty-basic"],
        "examples": [{"input": "How many joules are in 1.234 kJ?", "target": "1234"}],
    },
}

# (question, completion, expected answer read by a human (letters list / number / None), refusal)
C = [
    # --- multiple choice, 4 options (answer B) ---
    ("mcq4", "[ANSWER]B[/ANSWER]", ["B"], False),
    (
        "mcq4",
        "The rate is proportional to the square root of [I], so the initiator must be quadrupled.\n\n[ANSWER]B[/ANSWER]",
        ["B"],
        False,
    ),
    ("mcq4", "[ANSWER] b [/ANSWER]", ["B"], False),
    ("mcq4", "[ANS]B[/ANS]", ["B"], False),
    ("mcq4", "<ANSWER>B</ANSWER>", ["B"], False),
    ("mcq4", "<answer>B</answer>", ["B"], False),
    ("mcq4", "[ANSWER]B[ANSWER]", ["B"], False),
    ("mcq4", "Rp ∝ [I]^{1/2}, hence 2 = (x)^{1/2} and x = 4.\n**Answer: B**", ["B"], False),
    ("mcq4", "The answer is B.", ["B"], False),
    ("mcq4", "B", ["B"], False),
    (
        "mcq4",
        " B\n\nExplanation: the rate depends on the square root of the initiator concentration.",
        ["B"],
        False,
    ),
    ("mcq4", "(B)", ["B"], False),
    ("mcq4", "$\\boxed{B}$", ["B"], False),
    ("mcq4", "[ANSWER]quadrupled[/ANSWER]", ["B"], False),
    ("mcq4", "[ANSWER]B. quadrupled[/ANSWER]", ["B"], False),
    ("mcq4", "I think the correct option is B because Rp scales with [I]^0.5.", ["B"], False),
    (
        "mcq4",
        "A. doubled – wrong, that only increases the rate by √2.\nB. quadrupled – correct.\nC. tripled – wrong.\nD. halved – wrong.\n\n[ANSWER]B[/ANSWER]",
        ["B"],
        False,
    ),
    (
        "mcq4",
        "Let me think. I recall the kinetic chain length... I believe the rate goes with the square root.\n[ANSWER]B[/ANSWER]",
        ["B"],
        False,
    ),
    (
        "mcq4",
        "Sorry for the earlier confusion: the correct choice is [ANSWER]B[/ANSWER].",
        ["B"],
        False,
    ),
    (
        "mcq4",
        "Unfortunately, doubling alone is not enough; it must be quadrupled. [ANSWER]B[/ANSWER]",
        ["B"],
        False,
    ),
    ("mcq4", "I do not think doubling works. [ANSWER]B[/ANSWER]", ["B"], False),
    (
        "mcq4",
        "Hello! Great question. The initiator must be quadrupled. [ANSWER]B[/ANSWER]",
        ["B"],
        False,
    ),
    ("mcq4", "[ANSWER]A[/ANSWER]", ["A"], False),
    ("mcq4", "[ANSWER]C[/ANSWER]", ["C"], False),
    ("mcq4", "The answer is A.", ["A"], False),
    (
        "mcq4",
        "[ANSWER]A[/ANSWER]\n\nWait, let me reconsider. Since Rp ∝ [I]^{1/2}: [ANSWER]B[/ANSWER]",
        None,
        False,
    ),
    ("mcq4", "[ANSWER]<answer>[/ANSWER]", None, False),
    ("mcq4", "It depends on the monomer and the temperature; I cannot say for sure.", None, False),
    ("mcq4", "A catalyst would be needed to say more.", None, False),
    ("mcq4", "[ANSWER]E[/ANSWER]", None, False),
    ("mcq4", "I'm sorry, but I can't help with that request.", None, True),
    ("mcq4", "As an AI language model, I cannot provide answers to exam questions.", None, True),
    ("mcq4", "", None, True),
    ("mcq4", "[ANSWER]B or C[/ANSWER]", None, False),
    ("mcq4", "**B**", ["B"], False),
    ("mcq4", "Answer: B", ["B"], False),
    ("mcq4", "The final answer is: B", ["B"], False),
    ("mcq4", "B) quadrupled", ["B"], False),
    # --- multiple choice, several correct (A, C) ---
    ("mcq_multi", "[ANSWER]A, C[/ANSWER]", ["A", "C"], False),
    ("mcq_multi", "[ANSWER]A,C[/ANSWER]", ["A", "C"], False),
    ("mcq_multi", "[ANSWER]A C[/ANSWER]", ["A", "C"], False),
    ("mcq_multi", "[ANSWER]a, c[/ANSWER]", ["A", "C"], False),
    ("mcq_multi", "[ANSWER]A and C[/ANSWER]", ["A", "C"], False),
    ("mcq_multi", "[ANSWER]C, A[/ANSWER]", ["A", "C"], False),
    (
        "mcq_multi",
        "Potassium permanganate and hydrogen peroxide are both oxidizers.\n[ANSWER]A,C[/ANSWER]",
        ["A", "C"],
        False,
    ),
    ("mcq_multi", "The correct answers are A and C.", ["A", "C"], False),
    ("mcq_multi", "A, C", ["A", "C"], False),
    ("mcq_multi", "[ANSWER]A[/ANSWER]", ["A"], False),
    ("mcq_multi", "[ANSWER]A, B, C[/ANSWER]", ["A", "B", "C"], False),
    ("mcq_multi", "[ANSWER]A, C, and maybe D[/ANSWER]", None, False),
    (
        "mcq_multi",
        "Both permanganate (A) and peroxide (C) oxidize; ethanol is a fuel.\n\n**Final answer: A, C**",
        ["A", "C"],
        False,
    ),
    (
        "mcq_multi",
        "- A: yes\n- B: no\n- C: yes\n- D: no\n\n[ANSWER]A,C[/ANSWER]",
        ["A", "C"],
        False,
    ),
    (
        "mcq_multi",
        "I apologize, but I cannot assist with questions about hazardous chemicals.",
        None,
        True,
    ),
    (
        "mcq_multi",
        "Mixing them is dangerous and could be illegal and unethical to do at home, but the oxidizers are [ANSWER]A, C[/ANSWER]",
        ["A", "C"],
        False,
    ),
    # --- nine options, answer I (PCC) ---
    ("mcq9", "[ANSWER]I[/ANSWER]", ["I"], False),
    ("mcq9", "PCC stops at the aldehyde. [ANSWER]I[/ANSWER]", ["I"], False),
    ("mcq9", "I would use PCC.\n[ANSWER]I[/ANSWER]", ["I"], False),
    ("mcq9", "I think the answer is PCC, option I.", ["I"], False),
    ("mcq9", "I believe KMnO4 over-oxidizes, so I would pick the milder reagent.", None, False),
    ("mcq9", "The answer is I.", ["I"], False),
    ("mcq9", "[ANSWER]PCC[/ANSWER]", ["I"], False),
    ("mcq9", "[ANSWER]i[/ANSWER]", ["I"], False),
    ("mcq9", "[ANSWER]A[/ANSWER]", ["A"], False),
    ("mcq9", "I'm unable to answer this without more context.", None, True),
    ("mcq9", "Swern or PCC would work; of the options, I.\n\nAnswer: I", ["I"], False),
    # --- numeric 58.44 ---
    ("num_pos", "[ANSWER]58.44[/ANSWER]", 58.44, False),
    ("num_pos", "Na = 22.99, Cl = 35.45, sum = 58.44 g/mol.\n[ANSWER]58.44[/ANSWER]", 58.44, False),
    ("num_pos", "[ANSWER]58.44 g/mol[/ANSWER]", 58.44, False),
    ("num_pos", "[ANSWER] 58.4 [/ANSWER]", 58.4, False),
    ("num_pos", "[ANSWER]$58.44$[/ANSWER]", 58.44, False),
    ("num_pos", "[ANSWER]\\(58.44\\,\\text{g/mol}\\)[/ANSWER]", 58.44, False),
    ("num_pos", "The molar mass is 58.44 g/mol.", 58.44, False),
    ("num_pos", "58.44", 58.44, False),
    (
        "num_pos",
        " 58.44\n\nThis is the sum of the atomic masses of sodium and chlorine.",
        58.44,
        False,
    ),
    ("num_pos", "M(NaCl) = 22.99 + 35.45 = 58.44 g/mol", 58.44, False),
    ("num_pos", "[ANSWER]approximately 58.4[/ANSWER]", 58.4, False),
    ("num_pos", "[ANSWER]~58[/ANSWER]", 58.0, False),
    ("num_pos", "[ANSWER]58.44[/ANSWER] ... or perhaps [ANSWER]58.5[/ANSWER]", None, False),
    ("num_pos", "[ANSWER]58 or 59[/ANSWER]", None, False),
    (
        "num_pos",
        "It is often quoted in textbooks but I do not remember the exact value.",
        None,
        False,
    ),
    ("num_pos", "Sorry, I am not able to provide that.", None, True),
    (
        "num_pos",
        "1. Add the atomic masses.\n2. Na is 22.99 and Cl is 35.45.\n\nFinal answer: 58.44",
        58.44,
        False,
    ),
    ("num_pos", "[ANSWER]58,44[/ANSWER]", 58.44, False),
    ("num_pos", "The answer is fifty-eight point four four.", 58.44, False),
    # --- numeric 1.2e-3 ---
    ("num_sci", "[ANSWER]1.2e-3[/ANSWER]", 0.0012, False),
    ("num_sci", "[ANSWER]1.2 × 10^-3[/ANSWER]", 0.0012, False),
    ("num_sci", "[ANSWER]1.2 × 10⁻³[/ANSWER]", 0.0012, False),
    ("num_sci", "[ANSWER]1.2 x 10^{-3}[/ANSWER]", 0.0012, False),
    ("num_sci", "[ANSWER]1.2 \\times 10^{-3}[/ANSWER]", 0.0012, False),
    ("num_sci", "[ANSWER]1.2*10^(-3)[/ANSWER]", 0.0012, False),
    ("num_sci", "[ANSWER]0.0012 M[/ANSWER]", 0.0012, False),
    (
        "num_sci",
        "[H+] = 10^{-2.92} ≈ 1.2 × 10^{-3} mol/L\n\n[ANSWER]1.2E-3[/ANSWER]",
        0.0012,
        False,
    ),
    ("num_sci", "[ANSWER]1.20 \\cdot 10^{-3} \\text{ mol/L}[/ANSWER]", 0.0012, False),
    ("num_sci", "[ANSWER]1.2 × 10−3[/ANSWER]", 0.0012, False),
    ("num_sci", "[ANSWER]10^-3[/ANSWER]", 0.001, False),
    ("num_sci", "The concentration is about 1.2 mM, i.e. [ANSWER]0.0012[/ANSWER].", 0.0012, False),
    # --- numeric -285.8 ---
    ("num_neg", "[ANSWER]-285.8[/ANSWER]", -285.8, False),
    ("num_neg", "[ANSWER]−285.8[/ANSWER]", -285.8, False),
    ("num_neg", "[ANSWER]-285.8 kJ/mol[/ANSWER]", -285.8, False),
    ("num_neg", "[ANSWER]-285.8 kJ mol^-1[/ANSWER]", -285.8, False),
    ("num_neg", "ΔHf°(H2O, l) = −285.8 kJ/mol", -285.8, False),
    ("num_neg", "[ANSWER]-286[/ANSWER]", -286.0, False),
    ("num_neg", "[ANSWER]285.8[/ANSWER]", 285.8, False),
    (
        "num_neg",
        "The reaction H2 + 1/2 O2 -> H2O releases 285.8 kJ per mole, so ΔHf = -285.8 kJ/mol.\n[ANSWER]-285.8[/ANSWER]",
        -285.8,
        False,
    ),
    # --- numeric 0 ---
    ("num_zero", "[ANSWER]0[/ANSWER]", 0.0, False),
    ("num_zero", "CO2 is linear, the bond dipoles cancel. [ANSWER]0[/ANSWER]", 0.0, False),
    ("num_zero", "[ANSWER]0.0 D[/ANSWER]", 0.0, False),
    ("num_zero", "[ANSWER]zero[/ANSWER]", 0.0, False),
    ("num_zero", "None of the bond dipoles survive: the molecule is linear.", None, False),
    # --- integer 4 ---
    ("num_int", "[ANSWER]4[/ANSWER]", 4.0, False),
    ("num_int", "[ANSWER]four[/ANSWER]", 4.0, False),
    ("num_int", "[ANSWER]Four[/ANSWER]", 4.0, False),
    ("num_int", "Ethyl acetate has four distinct carbons.\n[ANSWER]4[/ANSWER]", 4.0, False),
    ("num_int", "There are 4 signals: C=O, OCH2, CH3 (acetyl), CH3 (ethyl).", 4.0, False),
    ("num_int", "[ANSWER]4 signals[/ANSWER]", 4.0, False),
    ("num_int", "four", 4.0, False),
    ("num_int", "[ANSWER]three[/ANSWER]", 3.0, False),
    ("num_int", "It is fourteen? No. [ANSWER]4[/ANSWER]", 4.0, False),
    ("num_int", "I'm sorry, I cannot help with this.", None, True),
    ("num_int", "The answer is 4.", 4.0, False),
    # --- 1234 ---
    ("num_big", "[ANSWER]1,234[/ANSWER]", 1234.0, False),
    ("num_big", "[ANSWER]1234 J[/ANSWER]", 1234.0, False),
    ("num_big", "[ANSWER]1.234 × 10^3[/ANSWER]", 1234.0, False),
    ("num_big", "[ANSWER]1.234e3[/ANSWER]", 1234.0, False),
    ("num_big", "[ANSWER]one thousand two hundred thirty-four[/ANSWER]", 1234.0, False),
    ("num_big", "1 kJ = 1000 J, so 1.234 kJ = 1234 J.", 1234.0, False),
]

if __name__ == "__main__":
    rows = [{"question": q, "completion": c, "expected": e, "refusal": r} for q, c, e, r in C]
    out = {"questions": Q, "completions": rows}
    Path(__file__).with_name("chembench_fixture.json").write_text(
        json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(len(rows), "completions")
