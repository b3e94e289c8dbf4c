"""Every weight and threshold of `search` and `ask`, named once with its reason.

Tuned on the odd-numbered questions of ../shared/eval/dev_ask.jsonl and ../shared/eval/more/ask.jsonl;
the even-numbered ones are reported apart (see the README's figures). Change them here, nowhere else.

Tried on the make-eval libraries and not kept, each measured with bench/ask_sets.py as the sum of MRR@10
over the five ask sets (dev_ask on the 4- and 15-book libraries, more/ask, more2/ask, md-more/ask), odd
(fit) / even (check) halves, against 3.636 / 3.468 for these constants (so later work need not repeat them):
- fusion weights fitted by pairwise logistic regression on the odd halves (bench/fusion_features.py), with
  the raw cosine as a feature too: 3.660 / 3.569; left out one set at a time, 3.549 -> 3.591 over the five,
  +0.008 a set: noise for one more fitted vector;
- BM25 b 0.5 / 0.9 and title weight 2 / 4.5 (ask only): 3.620-3.548 odd; none better on both halves;
- keyword evidence scaled by how much of the question the best keyword entity holds (absolute rather than
  relative coverage): 3.429-3.593 odd;
- a query-term proximity bonus (two of the question's words within 4 tokens, idf-weighted) on the 100 best:
  3.661 / 3.488 at its odd optimum (0.05);
- with window_penalty (below), a proximity bonus on top: 3.620-3.653 / 3.547-3.589;
- one more window per entity holding its title alone: 3.626 / 3.466;
- with window_penalty, six windows per entry instead of three (rank.units.MAX_CHUNKS): 3.605 / 3.541 against
  3.656 / 3.535; w_keyword 0.45 / 0.75, w_dense 0.7 / 1.0, w_typed 0.1, dense_floor_percentile 75 all refitted
  beside it: 3.605-3.661 odd, none above 0.005 over these constants;
- a keyword score per named part of a monster (BM25 of the trait alone): no question moved;
- sentence-side feedback (the question's vector moved toward the mean of its 3-10 closest windows, weight
  0.3-1.0): 3.545-3.572 / 3.489-3.529 against 3.656 / 3.535;
- class features as results of their own (not folded into the class): 3.437 / 3.250 (the class loses its
  features' evidence; "musician who casts spells" no longer finds the Bard).

After the window changes below and the leading-phrase intent (query.intent), the sums stood at 3.646 / 3.708;
refitted one at a time there: w_dense 0.7 / 0.9 gave 3.680 / 3.674 and 3.649 / 3.681, w_keyword 0.5 / 0.7
3.650 / 3.723 and 3.657 / 3.648, window_penalty 0.02 / 0.04 3.653 / 3.668 and 3.638 / 3.715; the best odd
half (w_dense 0.7) lowers the even one, so none was kept. Also not kept there: the question's vector averaged
with that of the question less its type words (3.646 / 3.666), and the keyword side without those words
(3.646 / 3.675).

What a window says (rank.units: parent heading, lead window, long template parts, short-window weights) was
measured the same way, each variant's windows embedded for the make-eval libraries and scored with
bench/ask_sets.py's rule; its figures and the variants not kept are in rank.units' WINDOWS_NOTE and SHORT_SHRINK.

Tried after that and not kept (same rule and libraries; sums of the five sets 3.646 / 3.708, and of all seven
sets' MRR@10, 4.868, for these constants):
- one more window per entry holding its first chunk without any heading (a heading's words can pull a
  paragraph's vector away from a question that paraphrases it: "Starting Moves > Backstab." drops the
  paragraph's cosine to "sneak attack ... unaware enemy" from 0.37 to 0.22): 3.652 / 3.687, seven 4.866; not
  counted in window_penalty: 3.648 / 3.686, 4.859;
- class and subclass features as results of their own that still roll up to their class (keyword score, and
  in its windows or as the best of their similarities): 3.620 / 3.726 (4.859) and 3.609 / 3.620 (4.775); a
  feature then outranks rule sections that answer (Cypher's type abilities) or its own subclass (later kept
  for a class's features alone, weighed against books no set holds: rank.units' FOLD_NOTE);
- query expansion by the model's own word similarities, restricted to the library's vocabulary (each question
  word's nearest library words at cosine >= 0.7 / 0.65, weight 0.3 / 0.5 x cosine, beside the feedback terms):
  3.654 / 3.717 (4.876) and 3.687 / 3.697 (4.890): the larger gain is in the fitted half only, the smaller one
  is noise for a scan-time stage of word vectors;
- reciprocal-rank fusion of the keyword and sentence ranks (k 5 / 20 / 60) in place of the scaled scores, the
  priors as they are: even halves of the seven sets 4.665 / 4.608 / 4.511 against 4.829 (md-more gains,
  dev_ask loses 0.03-0.06 on every library).

Tried after the feedback change (FEEDBACK_NOTE) and not kept, bench/ask_sets.py on the seven make-eval rows
(sum 4.905: odd 5.017, even 4.801) and the eleven books no set holds (sum 8.902):
- feedback read from each nearest section's best window (the passage that met the question: a monster's
  "Life Drain" part) instead of its title and opening: 4.874 (odd 4.990) and 8.829; from both: 4.913 (odd
  5.021, even 4.811) and 8.864, noise;
- book-level evidence (each entry gains 0.1-0.2 x its book's mean of its three or five best fused scores,
  over the best book's), so a question about one game leans to that game's book: 4.871-4.888, every
  multi-book row lower (dev_ask on the 15-book library 0.818 -> 0.813); unseen books unchanged (one book each);
- an entity's similarity as its best window plus 0.1 / 0.25 x its second best (evidence in more than one place):
  odd 5.049 / 5.061 but even 4.777 / 4.659 and unseen 8.937 -> 8.684 / 8.406 (fitting, not transfer);
- `ask`'s typed prior (w_typed) for entities only, not rules: 4.922 (md-more on all+md 0.407 -> 0.429) but
  unseen 8.904 -> 8.837 (13th Age and Cepheus each lose an answer).
"""

from __future__ import annotations

from dataclasses import dataclass

# FEEDBACK_NOTE: with vectors, `ask`'s feedback terms are read from the prf_docs sections nearest the question
# in meaning (the sentence side's ranking), not from BM25's best: for a paraphrase the keyword side then meets
# the book's own words ("a rocket backpack" -> "jet", "pack"). Before, feedback came from the keyword pass
# alone, which a paraphrase's stray words lead astray (a "Golem, Stone" for "turns people to stone" fed
# "golem"). Measured with bench/ask_sets.py on the seven make-eval ask rows (the sum of MRR@10; odd halves
# fit, even ones check) and on eleven books no set holds (each its own library; 155 questions): feedback from a
# mix of both rankings, sentence weight 0.25 / 0.5 / 1 / 2 / 5 / all, odd sums 4.943 / 4.970 / 4.965 / 4.974 /
# 4.973 / 4.971 against 4.961 before: flat from 0.5 on, so the plain nearest sections, with no weight of
# their own. Then prf_terms_nearest 6 / 8 / 10 and prf_weight 0.25 / 0.35 / 0.45 on the odd halves: 4.971 to
# 5.019, a plateau at 8-10 terms; 10 terms at the weight as it was (5.017). Even halves 4.732 -> 4.801; the
# unseen books' sum 8.641 -> 8.914 (mean 0.786 -> 0.810; Mausritter +0.104, QuestWorlds -0.034). Keyword-only
# feedback keeps prf_terms: 10 there gave odd 4.148 -> 4.200 but unseen 7.105 -> 7.039. prf_docs with the
# nearest sections, 3 / 4 / 5 / 7 / 8: odd sums 4.929 / 4.976 / 5.017 / 4.963 / 4.926, so 5 as before.


@dataclass(frozen=True)
class Ranking:
    # --- keyword scores (search and ask) ---
    fuzzy_weight: float = 0.45  # search: trigram title similarity beside BM25 (names are typed with typos)
    exact_bonus: float = 0.35  # a title equal to the whole query (up to spacing/plural) is what a GM typing a name wants
    exact_min_similarity: float = 0.6  # only titles at least this trigram-similar are checked for equality (speed)
    correction_share: float = 0.8  # a spelling-corrected token counts less than one the user typed
    # --- ask: keyword side ---
    ask_fuzzy_weight: float = 0.2  # typo-tolerant title matching suits names more than sentences
    prf_weight: float = 0.25  # pseudo-relevance-feedback terms: weaker still, they are guesses
    prf_docs: int = 5  # feedback is read from this many top keyword sections
    prf_terms: int = 6  # and adds at most this many terms
    prf_terms_nearest: int = 10  # ...or this many, read from the sections nearest in meaning (FEEDBACK_NOTE)
    coverage_power: float = 2.0  # an entity's keyword score times (its rarity-weighted share of the question's
    # words) ** this: a question is a sentence, and one of its words in a short title ("Bow") is not an answer.
    # Fitted on the odd questions of dev_ask (4-book and 15-book libraries), more/ask, more2/ask (all pdf-more
    # books) and md-more/ask, with w_keyword below: sum of odd-half MRR@10 3.45 (none, w_keyword 0.45) -> 3.49
    # (1) -> 3.53 (2) -> 3.46 (3), and 3.54 when an entity counts its folded subsections' words. Even halves,
    # none -> 2: dev_ask 15-book 0.750 -> 0.744, 4-book 0.839 -> 0.836, more 0.676 -> 0.787, more2 0.740 -> 0.762,
    # md-more 0.281 -> 0.388
    fold_share: float = 1.0  # an entity earns the keyword score of its best folded subsection ("Life Drain" in a stat block)
    rollup_share: float = 0.5  # a rules section earns this share of the keyword score of an untyped subsection that
    # is a result of its own (rank.units.rollup_targets: "Example of Earning a Legend Point" under "Legend Points"):
    # the subsection, named by the words, ranks first, and the section still carries them. Odd halves of md-more/ask,
    # more/ask and more2/ask (their libraries rescanned): 1.882 (1.0) / 1.884 (0.75, 0.5, 0.25); even 2.086 (1.0,
    # 0.75) / 2.077 (0.5) / 2.068 (0.25). At 1.0 the section ties its subsection and wins on its type; of the tied
    # values 0.5 is kept (unseen books: Liminal Horror 0.669 at 0.5, 0.636 at 0.75; the others equal).
    # --- ask: fusion ---
    w_keyword: float = 0.6  # keyword evidence: precise on names, blind to paraphrase (odd-half optimum; 0.45
    # before coverage_power: 0.3 / 0.45 / 0.6 / 0.8 give odd-half sums 3.52 / 3.50 / 3.53 / 3.52 with it)
    window_penalty: float = 0.03  # an entity's best sentence similarity, for ranking, less this x ln(its windows):
    # the best of many windows is higher by chance, so long general sections outranked short ones that answer
    # (#27). Fitted on the odd halves of the five ask sets (make-eval libraries; bench/ask_sets.py): sum of odd
    # MRR@10 3.636 (0) -> 3.625 (0.02) -> 3.656 (0.03) -> 3.653 (0.04) -> 3.650 (0.05); even halves 3.468 -> 3.535
    # at 0.03 (8 questions up, 5 down across the sets). Confidence and the shown similarity keep the raw one.
    w_dense: float = 0.8  # sentence similarity: carries paraphrased questions (tuning-half optimum with w_typed 0.05)
    dense_floor_percentile: float = 50.0  # similarities below the median count as no evidence at all
    w_type: float = 0.3  # a result of the content type the question names ("spell", "monster")
    w_typed: float = 0.05  # a tie-breaker for entities (a spell, a monster) over plain sections: outside D&D
    # the answer is often a plain rules section, and 0.1 buried those (tuning half 0.760 -> 0.782)
    w_kind: float = 0.2  # a monster of the kind the question names ("undead", "dragon")
    w_concept: float = 1.5  # typed fields matching a concept of the question ("tanky" -> hit die, armour, "spellcaster"
    # -> spellcasting): fitted on the odd questions of bench/gold/concepts.jsonl on the 15-book library (0.487 -> 1.0;
    # even half 0.75 -> 0.875); dev_ask, more/ask and more2/ask unchanged (their questions name no concept)
    min_kind_entries: int = 2  # a monster kind must type this many entries to count as a kind word
    # --- ask: confidence that the library answers the question at all (query.confidence) ---
    # Fitted by bench/ask_calibration.py on the odd-numbered questions of dev_ask, more/ask and more2/ask
    # plus the odd lines of bench/data/offtopic_questions.txt, pooled over two libraries (all of
    # ../shared/corpus/pdf, md and pdf-more, and the 4-book one of ../shared/eval/mklib.sh: a question's
    # best similarity depends on what else the library holds; fitted on the big one alone, the step at
    # 0.33-0.37 lost 13 % of the right answers in the small one). Fit half: off-topic emptied 87 %, right
    # answers lost 0.0 % of 52; report half: 100 % of 30 and 0.0 % of 51. Refitted when windows got their parent
    # heading, a lead and weights (rank.units; the old values lost 1.8 % of the fit half's right answers), with
    # md-more/ask's questions too and md-more alone and beside the 15 books as two more libraries: fit half
    # off-topic emptied 85 % of 60, right answers lost 0.0 % of 132; report half 97 % of 60 and 0.0 % of 135.
    similarity_low: float = 0.25  # evidence (best weighted cosine less the coverage term) at which nothing answers
    similarity_high: float = 0.53  # ...and from which the question is fully covered
    coverage_weight: float = 0.2  # how much words that no one entry holds together lower that evidence
    # Keyword mode only (no vectors: --ranker bm25, or no model): one entry's largest share of the question's
    # words. Fitted by bench/ask_calibration.py --keyword on the odd questions of dev_ask, more/ask, more2/ask
    # and md-more/ask plus the odd off-topic lines, pooled over the 15-book library with md-more, the 4-book
    # one and md-more alone: off-topic emptied 56 % (fit) / 76 % (report half; was 7-13 % with 0.0-0.1 set by
    # eye), right answers lost 0 % of 83 / 1.2 % of 83. It is a step: a wider ramp lost answers in the fit half.
    coverage_low: float = 0.36
    coverage_high: float = 0.40
    ask_min_score: float = 0.1  # ask's default --min-score: below it a result is a weak answer
    # --- one row per thing (which texts are copies is decided at scan time: rank.copies) ---
    overfetch: int = 4  # candidates fetched per result row, so folding copies still fills the page


RANKING = Ranking()
