// Package stats holds the statistics behind `bench compare`: a two-sided
// Mann-Whitney U test, the Hodges-Lehmann shift estimate with its confidence
// interval, a stratified comparison for a group of prompts (van Elteren's
// test and the stratified Hodges-Lehmann shift of log ratios, see
// CompareStrata), a paired comparison of matched samples (Wilcoxon's
// signed-rank test on log ratios and the Hodges-Lehmann shift of the
// ratio, see ComparePaired), Fisher's exact test on a 2x2 table, the exact
// McNemar test on matched pass/fail outcomes (McNemarExact, gonum's
// binomial), Holm and Benjamini-Hochberg p-value adjustment, a latency
// decision step that applies them to a family of comparisons, and the
// minimum detectable effect of a comparison judged "~" (MDE).
//
// The package is data first, like benchstat: samples go in, a result struct
// with the test used, the p-value and the reasons for a verdict comes out;
// rendering is the caller's job. Every result is free of NaN and ±Inf so that
// it encodes to JSON as is.
//
// # Conventions
//
// The numbers follow R's stats package (R 4.2), so that a reader can check
// any figure with one line of R:
//
//   - MannWhitney(x, y) is wilcox.test(x, y) with its defaults: an exact
//     p-value when both samples have fewer than 50 values and no value is
//     tied in the pooled sample, otherwise the normal approximation with the
//     tie and continuity corrections. CompareSamples passes cur as x.
//   - HodgesLehmann(base, cur, conf) is the estimate and interval of
//     wilcox.test(cur, base, conf.int = TRUE, conf.level = conf) in the
//     exact case. Beyond it (ties, or 50 or more values on a side) the
//     interval's ends are the order statistics of the pairwise differences
//     that the continuity-corrected normal approximation picks (Hollander
//     and Wolfe, Nonparametric Statistical Methods, section 4.3), where R
//     searches a root of the approximate statistic with uniroot; the ends
//     agree with R's to its tolerance. The estimate is always the median
//     of the pairwise differences, the Hodges-Lehmann estimator itself; R's
//     asymptotic branch reports the root instead, which can differ by up to
//     a gap between adjacent differences.
//   - FisherExact is fisher.test(matrix(c(a, c, b, d), 2))$p.value.
//   - AdjustHolm and AdjustBH are p.adjust(p, "holm") and p.adjust(p, "BH").
//   - ComparePaired's test is wilcox.test(log(cur), log(base), paired =
//     TRUE): exact below 50 pairs without zeros or ties, else the normal
//     approximation with R's corrections; its estimate keeps the zero
//     differences, where R drops them. McNemarExact is
//     binom.test(b, b + c)$p.value.
//
// # Why the signed-rank test is written here
//
// No Go library in the module graph has it (gonum's stat has neither it
// nor the exact Wilcoxon distributions; go-moremath has the U test and
// t-tests), and its exact null distribution is one recurrence; the
// reference test checks it against R's documented example and every
// sign pattern of up to 14 pairs.
//
// The tests check each function against published R outputs and against
// the U test of github.com/aclements/go-moremath/stats, which benchstat
// (golang.org/x/perf/benchmath) calls.
//
// # Deciding
//
// CompareSamples gives one comparison's figures; Judge decides a family of
// them together, correcting for the number of comparisons (Holm by
// default, so the chance of any false alarm in the family stays at most
// Alpha). For bench compare a family is naturally the per-prompt
// comparisons of one metric in one (provider, model, thinking level)
// group, and the group-level comparisons of one metric another. Floor is
// in the samples' unit: DefaultOptions suits milliseconds; tokens/s wants
// HigherIsBetter and a floor of its own. A comparison Judge cannot decide
// (no sample on a side, fewer than MinSamples, or sizes whose smallest
// possible p-value cannot pass the family's bar) is NotJudged with the
// reason, never "~": "~" means judged, and no change.
//
// # Why the U test is written here
//
// go-moremath recomputes the exact U distribution on every call: about
// 3 ms for two samples of 50 and 7 ms for two samples of 25 with ties
// (wall time measured here on a shared 2-core machine), too slow for a
// compare that may make thousands of comparisons within its 3 s budget.
// Here the exact null distributions for all sizes below 50 are built
// together once (6 MB, a few milliseconds) and ties use R's normal
// approximation, so a comparison costs little more than a sort.
//
// # Large samples
//
// The Hodges-Lehmann estimate is the median of all n1*n2 pairwise
// differences, and the interval's ends are two more of their order
// statistics. Up to 1,024 differences they are listed and each order
// statistic found by quickselect. Beyond, nothing is listed: the order
// statistics are selected from the implicit sorted matrix of differences
// (after Monahan, "Fast computation of the Hodges-Lehmann location
// estimator", ACM TOMS 10(3), 1984). Each round counts the differences
// below two pivots drawn from a random sample of the candidates, in
// O(n1+n2) with pointers that only move one way, and keeps the candidates
// between them, a small share; a handful of rounds leave few enough to
// list. The cost is O((n1+n2) log(n1 n2)) time and O(n1+n2) memory, the
// result is exact, never sampled or bootstrapped, and the random draws use
// a fixed seed, so the work done is reproducible too. Two samples of
// 100,000 take about 0.1 s of CPU; two of 1,000 about 1 ms.
//
// Layer: verdicts (the statistics compare and history apply; imports no
// bench package).
package stats
