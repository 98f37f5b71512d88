// answers.js shows answers.html's cells from the JSON inlined in
// #answers-data: one prompt at a time, each group's answer beside the
// others. Text from a model, a tool or a provider is only ever set with
// textContent, never parsed as HTML.
(function () {
	"use strict";

	const t0 = performance.now();
	const D = JSON.parse(document.getElementById("answers-data").textContent);
	const S = D.strings;
	// The fields of a packed cell (answers.Cell).
	const G = 0, P = 1, R = 2, LINE = 3, ST = 4, V = 5, TXT = 6, TB = 7, KB = 8, RSN = 9, VIOL = 10, ERR = 11,
		TTFT = 12, E2E = 13, OUT = 14, COST = 15, CALLS = 16, TURNS = 17, RED = 18;
	const FLAGS = [[1, "error", "error result"], [2, "unknown", "unknown tool"], [4, "wrong", "wrong arguments"],
		[8, "unanswered", "unanswered"], [16, "failfirst", "scripted first failure"], [32, "unsafe", "unsafe action"],
		[64, "schema", "arguments fail the tool's schema"], [128, "injected", "result carries the planted instruction"],
		[256, "obeys", "obeys the injection"]];
	const FOLD_CHARS = 700, FOLD_LINES = 12;

	const str = i => (i == null || i < 0) ? "" : S[i];
	const enc = new TextEncoder();

	// cells[prompt][group][rep]
	const grid = D.prompts.map(() => D.groups.map(() => []));
	for (const c of D.cells) grid[c[P]][c[G]][c[R]] = c;

	// Per prompt: the cells that failed their check or did not succeed,
	// and whether the groups disagree: each group's outcome over its
	// repetitions is pass, fail or mixed, and not all groups have the same.
	const pstats = D.prompts.map((_, p) => {
		let failed = 0;
		const outcomes = new Set();
		for (const reps of grid[p]) {
			let ps = 0, fs = 0;
			for (const c of reps) {
				if (!c) continue;
				if (c[V] === 1) ps++;
				else if (c[V] === 0 || c[V] === -2 || c[V] === -3) fs++;
			}
			failed += fs;
			if (ps || fs) outcomes.add(ps && fs ? "mixed" : ps ? "pass" : "fail");
		}
		return { failed: failed, disagree: outcomes.size > 1 };
	});

	const st = { p: 0, r: 0, provider: "", failed: false, disagree: false };
	const el = id => document.getElementById(id);

	function readHash() {
		const h = new URLSearchParams(location.hash.slice(1));
		const pi = D.prompts.findIndex(x => x.id === h.get("p"));
		if (pi >= 0) st.p = pi;
		const r = parseInt(h.get("r"), 10);
		if (r >= 0 && r < D.reps) st.r = r;
		if (h.has("provider")) st.provider = h.get("provider");
		st.failed = h.get("failed") === "1";
		st.disagree = h.get("disagree") === "1";
	}

	function writeHash() {
		const h = new URLSearchParams();
		if (D.prompts.length) h.set("p", D.prompts[st.p].id);
		h.set("r", String(st.r));
		if (st.provider) h.set("provider", st.provider);
		if (st.failed) h.set("failed", "1");
		if (st.disagree) h.set("disagree", "1");
		history.replaceState(null, "", "#" + h.toString());
	}

	function node(tag, cls, text) {
		const n = document.createElement(tag);
		if (cls) n.className = cls;
		if (text != null) n.textContent = text;
		return n;
	}

	function promptLabel(p) {
		const pr = D.prompts[p];
		return pr.name ? pr.id + " " + pr.name : pr.id;
	}

	function shownPrompts() {
		const out = [];
		D.prompts.forEach((_, p) => { if (!st.disagree || pstats[p].disagree) out.push(p); });
		return out;
	}

	function renderControls() {
		const sel = el("prompt"), list = el("prompt-list");
		sel.replaceChildren();
		list.replaceChildren();
		const shown = shownPrompts();
		if (shown.length && !shown.includes(st.p)) st.p = shown[0];
		for (const p of shown) {
			const s = pstats[p];
			const o = node("option", null, promptLabel(p) + (s.failed ? " (" + s.failed + " failed)" : ""));
			o.value = String(p);
			o.selected = p === st.p;
			sel.appendChild(o);
			const b = node("button", p === st.p ? "on" : "", promptLabel(p));
			b.dataset.prompt = D.prompts[p].id;
			if (s.failed) b.appendChild(node("span", "bad", " ✗" + s.failed));
			b.addEventListener("click", () => { st.p = p; update(); });
			list.appendChild(b);
		}
		const reps = el("reps");
		reps.replaceChildren();
		for (let r = 0; r < D.reps; r++) {
			const b = node("button", r === st.r ? "on" : "", String(r));
			b.dataset.rep = String(r);
			b.addEventListener("click", () => { st.r = r; update(); });
			reps.appendChild(b);
		}
	}

	function verdictOf(c) {
		if (!c) return ["none", "not run", ""];
		switch (c[V]) {
			case 1: return ["pass", "passed", "pass"];
			case 0: return ["fail", "failed its check", "fail"];
			case -1: return ["nocheck", "no check", "nocheck"];
			case -3: return ["checkerror", "check error: not judged", "error"];
		}
		return ["error", str(c[ST]) || "did not succeed", "error"];
	}

	function fmtMS(v) { return v == null ? "–" : v < 10 ? v.toFixed(1) + " ms" : Math.round(v) + " ms"; }

	function fmtUSD(v) {
		if (v == null) return "";
		if (v === 0) return "$0";
		const a = Math.abs(v);
		if (a >= 100) return "$" + v.toFixed(0);
		if (a >= 1) return "$" + v.toFixed(2);
		return "$" + v.toFixed(Math.max(0, 3 - Math.floor(Math.log10(a))));
	}

	// textBlock is a <pre> of model text, folded when long, with a note
	// when this page (or results.jsonl) holds less than the whole.
	function textBlock(parent, text, whole, kept, line, what) {
		const pre = node("pre", what, text);
		parent.appendChild(pre);
		const lines = text.split("\n").length;
		if (text.length > FOLD_CHARS || lines > FOLD_LINES) {
			pre.classList.add("folded");
			const b = node("button", "unfold", "show all " + lines + " lines");
			b.addEventListener("click", () => { pre.classList.toggle("folded"); b.textContent = pre.classList.contains("folded") ? "show all " + lines + " lines" : "fold"; });
			parent.appendChild(b);
		}
		const shown = enc.encode(text).length;
		if (kept != null && shown < kept) {
			parent.appendChild(node("div", "cut", "cut here at " + shown + " of " + kept + " bytes; the whole " + what + " is in " + D.source + " line " + line));
		}
		if (whole != null && kept != null && kept < whole) {
			parent.appendChild(node("div", "cut", D.source + " keeps " + kept + " of its " + whole + " bytes (max_output_bytes)"));
		}
	}

	// markedBlock is a result that carries a planted instruction, the
	// instruction in a <mark> (text nodes only, never HTML).
	function markedBlock(parent, text, planted) {
		const pre = node("pre", "result");
		let at = 0;
		for (let i = planted ? text.indexOf(planted) : -1; i >= 0; i = text.indexOf(planted, at)) {
			pre.appendChild(document.createTextNode(text.slice(at, i)));
			pre.appendChild(node("mark", "injected", planted));
			at = i + planted.length;
		}
		pre.appendChild(document.createTextNode(text.slice(at)));
		parent.appendChild(pre);
	}

	function callItem(name, args, result, flags, line, planted) {
		const li = node("li");
		li.appendChild(node("span", "callname", str(name) || "(no name)"));
		for (const [bit, cls, label] of FLAGS) if (flags & bit) li.appendChild(node("span", "mark " + cls, label));
		if (args >= 0) {
			li.appendChild(node("div", "label", "arguments"));
			textBlock(li, str(args), null, null, line, "arguments");
		}
		if (result !== undefined) {
			li.appendChild(node("div", "label", "result"));
			if (result >= 0 && (flags & 128)) markedBlock(li, str(result), planted);
			else if (result >= 0) textBlock(li, str(result), null, null, line, "result");
			else li.appendChild(node("div", "empty", flags & 8 ? "never answered (max_turns)" : "empty"));
		}
		return li;
	}

	function card(g, c) {
		const [vcls, vtext] = verdictOf(c);
		const box = node("article", "card v-" + vcls);
		box.dataset.group = D.groups[g].label;
		box.dataset.verdict = vcls;
		box.appendChild(node("h3", null, D.groups[g].label));
		const head = node("div");
		head.appendChild(node("span", "verdict " + vcls, vtext));
		// One square per repetition, coloured by its verdict: the switch.
		const dots = node("span", "repdots");
		for (let r = 0; r < D.reps; r++) {
			const rc = grid[st.p][g][r];
			const d = node("button", "d-" + verdictOf(rc)[2] + (r === st.r ? " on" : ""), String(r));
			d.title = "repetition " + r + ": " + verdictOf(rc)[1];
			d.addEventListener("click", () => { st.r = r; update(); });
			dots.appendChild(d);
		}
		head.appendChild(dots);
		box.appendChild(head);
		if (!c) {
			box.appendChild(node("p", "empty", "no cell for this repetition"));
			return box;
		}
		const figs = ["TTFT " + fmtMS(c[TTFT]), "e2e " + fmtMS(c[E2E])];
		if (c[OUT] != null) figs.push(c[OUT] + " output tokens");
		if (c[COST] != null) figs.push(fmtUSD(c[COST]));
		figs.push(D.source + " line " + c[LINE]);
		box.appendChild(node("div", "figures", figs.join(" · ")));
		if (c[VIOL] >= 0) box.appendChild(node("div", "why violation", "violation: " + str(c[VIOL])));
		if (c[ERR] >= 0) box.appendChild(node("div", "why error", "error: " + str(c[ERR])));
		if (c[TXT] >= 0) {
			textBlock(box, str(c[TXT]), c[TB], c[KB], c[LINE], "answer");
		} else if (!c[TURNS]) {
			box.appendChild(node("p", "empty", c[TB] > 0 ? "answer left out: the page's budget was reached (" + D.source + " line " + c[LINE] + ")" : "no answer text"));
		}
		if (c[RED]) {
			box.appendChild(node("div", "cut redacted", "bench replaced a secret in this answer with [redacted] before the checks read it (raw_output_redacted)"));
		}
		if (c[RSN] >= 0) {
			const det = node("details", "reasoning");
			det.appendChild(node("summary", null, "reasoning"));
			textBlock(det, str(c[RSN]), null, null, c[LINE], "reasoning");
			box.appendChild(det);
		}
		if (c[CALLS] && c[CALLS].length) {
			box.appendChild(node("div", "label", "tool calls"));
			const ol = node("ol", "calls");
			for (const [name, args, flags] of c[CALLS]) ol.appendChild(callItem(name, args, undefined, flags || 0, c[LINE]));
			box.appendChild(ol);
		}
		if (c[TURNS]) {
			const q = D.prompts[c[P]].q, planted = q && q.injection ? str(q.injection[0]) : "";
			box.appendChild(node("div", "label", "trajectory"));
			const ol = node("ol", "turns");
			c[TURNS].forEach((t, ti) => {
				if (typeof t === "number") { ol.appendChild(node("li", "empty", "… and " + t + " more turns in " + D.source + " line " + c[LINE])); return; }
				const [text, err, calls, more] = t;
				const li = node("li", "turn");
				li.appendChild(node("div", "turnno", "turn " + (ti + 1)));
				if (text >= 0) textBlock(li, str(text), null, null, c[LINE], "text");
				if (calls.length) {
					const cl = node("ol", "calls");
					for (const [name, args, result, flags] of calls) cl.appendChild(callItem(name, args, result, flags, c[LINE], planted));
					if (more) cl.appendChild(node("li", "empty", "… and " + more + " more calls"));
					li.appendChild(cl);
				}
				if (err >= 0) li.appendChild(node("div", "why", "error: " + str(err)));
				if (text < 0 && !calls.length && err < 0) li.appendChild(node("span", "empty", "(empty reply)"));
				ol.appendChild(li);
			});
			box.appendChild(ol);
		}
		return box;
	}

	// renderQuestion shows what the prompt asked (config.json's
	// prompt_set): its text, the system prompt, the tools offered and the
	// checks a pass needed, above the answers.
	function renderQuestion() {
		const box = el("question");
		box.replaceChildren();
		if (!D.prompts.length) return;
		const q = D.prompts[st.p].q;
		if (!q) {
			box.appendChild(node("p", "empty", D.no_questions ? "The question is not shown: " + D.no_questions + "." : "config.json's prompt_set has no entry for this prompt."));
			return;
		}
		const part = (label, cls) => { const d = node("div", "qpart " + cls); d.appendChild(node("div", "label", label)); box.appendChild(d); return d; };
		if (q.system >= 0) textBlock(part("system prompt", "q-system"), str(q.system), null, null, 0, "system");
		textBlock(part(q.max_turns ? "task (at most " + q.max_turns + " turns)" : "prompt", "q-text"), str(q.text), null, null, 0, "prompt");
		if (q.tools && q.tools.length) {
			const ol = node("ol", "calls q-tools");
			for (const [name, desc, params] of q.tools) {
				const li = node("li");
				li.appendChild(node("span", "callname", str(name)));
				if (q.forbidden && q.forbidden.some(f => str(f) === str(name))) li.appendChild(node("span", "mark unsafe", "forbidden"));
				if (desc >= 0) li.appendChild(node("span", "desc", " " + str(desc)));
				if (params >= 0) textBlock(li, str(params), null, null, 0, "parameters");
				ol.appendChild(li);
			}
			part("tools offered", "q-tools-part").appendChild(ol);
		}
		if (q.injection) {
			const [text, style, goal, carrier, target] = q.injection.map(str);
			const d = part("injection: " + style + ", " + goal.replace("_", " ") + "; planted in " + carrier + "'s result, asks for " + target, "q-injection");
			d.appendChild(node("pre", "planted", text));
		}
		const checks = part("to pass", "q-checks");
		if (q.checks && q.checks.length) {
			const ul = node("ul", "checks");
			for (const c of q.checks) ul.appendChild(node("li", null, str(c)));
			checks.appendChild(ul);
		} else {
			checks.appendChild(node("span", "empty", "no check: an answer that arrives counts"));
		}
	}

	function renderCards() {
		const cards = el("cards");
		cards.replaceChildren();
		if (!D.prompts.length) {
			el("prompt-title").textContent = "No results.";
			return;
		}
		el("prompt-title").textContent = promptLabel(st.p) + " · repetition " + st.r;
		let shown = 0, hidden = 0;
		D.groups.forEach((grp, g) => {
			if (st.provider && grp.provider !== st.provider) return;
			const c = grid[st.p][g][st.r];
			if (st.failed && !(c && (c[V] === 0 || c[V] === -2 || c[V] === -3))) { hidden++; return; }
			cards.appendChild(card(g, c));
			shown++;
		});
		el("prompt-note").textContent = shown + (shown === 1 ? " group" : " groups") + (hidden ? ", " + hidden + " hidden (passed or no check)" : "") +
			(pstats[st.p].disagree ? "; the groups disagree on this prompt" : "");
	}

	function update() {
		writeHash();
		renderControls();
		renderQuestion();
		renderCards();
	}

	const providers = [...new Set(D.groups.map(g => g.provider))].sort();
	for (const p of providers) {
		const o = node("option", null, p);
		o.value = p;
		el("provider").appendChild(o);
	}
	el("prompt").addEventListener("change", e => { st.p = +e.target.value; update(); });
	el("provider").addEventListener("change", e => { st.provider = e.target.value; update(); });
	el("failed").addEventListener("change", e => { st.failed = e.target.checked; update(); });
	el("disagree").addEventListener("change", e => { st.disagree = e.target.checked; update(); });
	window.addEventListener("hashchange", () => { readHash(); syncInputs(); renderControls(); renderQuestion(); renderCards(); });

	function syncInputs() {
		el("provider").value = st.provider;
		el("failed").checked = st.failed;
		el("disagree").checked = st.disagree;
	}

	readHash();
	syncInputs();
	update();
	// For tests and the curious.
	window.benchAnswers = {
		renderMS: performance.now(), scriptMS: performance.now() - t0, data: D,
		show: (id, rep) => { const i = D.prompts.findIndex(x => x.id === id); if (i >= 0) st.p = i; if (rep != null) st.r = rep; update(); return i >= 0; },
	};
	document.documentElement.dataset.rendered = "true";
})();
