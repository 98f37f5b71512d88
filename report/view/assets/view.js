// view.js draws bench view's pages from the server's JSON. Text from a
// run (names, answers, errors) is only ever set with textContent, never
// parsed as HTML.
(function () {
	"use strict";

	const el = id => document.getElementById(id);
	function node(tag, cls, text) {
		const n = document.createElement(tag);
		if (cls) n.className = cls;
		if (text != null) n.textContent = text;
		return n;
	}
	function link(href, text) {
		const a = node("a", null, text);
		a.href = href;
		return a;
	}
	const cls = s => String(s).replace(/[^a-z0-9_]+/gi, "-");
	async function getJSON(url) {
		const r = await fetch(url);
		if (!r.ok) throw new Error((await r.text()).trim() || r.statusText);
		return r.json();
	}
	const state = { ready: false, error: "" };
	window.benchView = state;

	// The list of runs.
	async function runsPage() {
		const L = await getJSON("/api/runs");
		const chosen = [];
		const states = [...new Set(L.runs.map(r => r.state))].sort();
		for (const s of states) { const o = node("option", null, s); o.value = s; el("state").appendChild(o); }
		function matches(r, q, st) {
			if (st && r.state !== st) return false;
			if (!q) return true;
			return [r.dir, r.run_id, r.state, r.config, r.setup, r.best, r.gate, r.problem].join(" ").toLowerCase().includes(q);
		}
		function render() {
			const q = el("find").value.trim().toLowerCase(), st = el("state").value;
			const body = el("runs-table").tBodies[0];
			body.replaceChildren();
			let shown = 0;
			for (const r of L.runs) {
				if (!matches(r, q, st)) continue;
				shown++;
				const tr = node("tr");
				tr.dataset.run = r.id;
				tr.dataset.state = r.state;
				const pick = node("input");
				pick.type = "checkbox";
				pick.disabled = r.state === "not a run";
				pick.checked = chosen.includes(r.id);
				pick.addEventListener("change", () => {
					const i = chosen.indexOf(r.id);
					if (pick.checked && i < 0) chosen.push(r.id);
					if (!pick.checked && i >= 0) chosen.splice(i, 1);
					el("compare").disabled = chosen.length !== 2;
				});
				const c0 = node("td"); c0.appendChild(pick); tr.appendChild(c0);
				const c1 = node("td");
				c1.appendChild(node("div", "dir", r.dir));
				if (r.run_id) c1.appendChild(node("div", "runid", "run " + r.run_id));
				tr.appendChild(c1);
				const c2 = node("td");
				c2.appendChild(node("span", "state " + cls(r.state), r.state));
				if (r.problem) c2.appendChild(node("div", "problem", r.problem));
				tr.appendChild(c2);
				tr.appendChild(node("td", null, r.started || ""));
				tr.appendChild(node("td", null, r.config || ""));
				tr.appendChild(node("td", null, r.setup || ""));
				const g = node("td", "gate " + cls(r.gate || ""), r.gate || "");
				if (r.gate && r.baseline) g.title = "against " + r.baseline;
				tr.appendChild(g);
				tr.appendChild(node("td", "n", r.state === "not a run" ? "" : String(r.cells)));
				tr.appendChild(node("td", "n", r.groups ? String(r.groups) : ""));
				tr.appendChild(node("td", null, r.best ? r.best + (r.best_pass ? " (" + r.best_pass + ")" : "") : ""));
				tr.appendChild(node("td", "n", r.fastest_e2e_p50 || ""));
				const links = node("td", "links");
				const base = "/run/" + encodeURIComponent(r.id) + "/";
				const names = { "report.html": "report", "answers.html": "answers", "summary.md": "summary.md", "compare/compare.html": "gate result", "traces/": "traces" };
				for (const f of r.files) links.appendChild(link(base + f, names[f] || f));
				if (r.state !== "not a run") links.appendChild(link("/cells?run=" + encodeURIComponent(r.id), "cells"));
				tr.appendChild(links);
				body.appendChild(tr);
			}
			el("count").textContent = shown + " of " + L.runs.length + " runs";
			el("more").textContent = L.more ? "… and " + L.more + " more runs not listed." : "";
		}
		el("find").addEventListener("input", render);
		el("state").addEventListener("change", render);
		el("compare").addEventListener("click", () => {
			// The list is newest first: the older run is the base.
			const order = L.runs.map(r => r.id);
			const [a, b] = [...chosen].sort((x, y) => order.indexOf(y) - order.indexOf(x));
			location.href = "/compare?base=" + encodeURIComponent(a) + "&new=" + encodeURIComponent(b);
		});
		render();
	}

	// One run's cells.
	async function cellsPage() {
		const params = new URLSearchParams(location.search);
		const run = params.get("run") || "";
		const f = { group: "f-group", prompt: "f-prompt", verdict: "f-verdict", failure: "f-failure" };
		let filled = false, seq = 0, detailLine = 0;
		function fill(sel, values) {
			for (const v of values) { const o = node("option", null, v); o.value = v; sel.appendChild(o); }
		}
		function query() {
			const q = new URLSearchParams({ run: run });
			for (const [k, id] of Object.entries(f)) if (el(id).value) q.set(k, el(id).value);
			if (el("f-text").value) q.set("q", el("f-text").value);
			return q;
		}
		async function load() {
			const my = ++seq;
			const q = query();
			history.replaceState(null, "", "/cells?" + q.toString());
			const t0 = performance.now();
			let A;
			try {
				A = await getJSON("/api/cells?" + q.toString());
			} catch (e) {
				state.error = e.message;
				el("cells-note").textContent = e.message;
				return;
			}
			if (my !== seq) return;
			if (!filled) {
				filled = true;
				fill(el("f-group"), A.facets.groups);
				fill(el("f-prompt"), A.facets.prompts);
				fill(el("f-verdict"), A.facets.verdicts);
				fill(el("f-failure"), A.facets.failures);
				for (const [k, id] of Object.entries(f)) if (params.get(k)) el(id).value = params.get(k);
				if (params.get("q")) el("f-text").value = params.get("q");
				el("run-title").textContent = A.run.dir + (A.run.run_id ? " · run " + A.run.run_id : "") + " · " + A.run.state;
				const links = el("run-links");
				for (const file of A.run.files) links.appendChild(link("/run/" + encodeURIComponent(run) + "/" + file, file));
				document.title = "bench view: " + A.run.dir;
				if (params.toString() !== new URLSearchParams({ run: run }).toString()) return load();
			}
			const R = A.result;
			const body = el("cells-table").tBodies[0];
			body.replaceChildren();
			for (const row of R.rows) {
				const tr = node("tr");
				tr.dataset.line = String(row.line);
				tr.dataset.verdict = row.verdict;
				tr.appendChild(node("td", "n", String(row.line)));
				tr.appendChild(node("td", null, row.group));
				tr.appendChild(node("td", null, row.prompt));
				tr.appendChild(node("td", "n", String(row.repetition)));
				tr.appendChild(node("td", "v-" + cls(row.verdict), row.verdict));
				tr.appendChild(node("td", null, row.failure));
				tr.appendChild(node("td", "n", row.e2e_ms + " ms"));
				tr.appendChild(node("td", "n", row.ttft_ms == null ? "–" : row.ttft_ms + " ms"));
				const snip = node("td", "snip", row.answer);
				if (row.violation) snip.appendChild(node("span", "why", "violation: " + row.violation));
				if (row.error) snip.appendChild(node("span", "why", "error: " + row.error));
				tr.appendChild(snip);
				tr.addEventListener("click", () => detail(row, tr));
				body.appendChild(tr);
			}
			const by = Object.entries(R.by_verdict).map(([k, v]) => v + " " + k).join(", ");
			el("cell-count").textContent = R.matched + " of " + R.total + " cells" + (by ? ": " + by : "");
			el("cells-note").textContent = "Filtered in " + R.took_ms.toFixed(1) + " ms on the server" + (A.built_ms ? " (the run's index built in " + A.built_ms.toFixed(0) + " ms)" : "") +
				". Text search looks at the first and last 192 bytes of each answer and the first 48 of its violation and error" + (R.no_text ? "; " + R.no_text + " cells past the index's budget are searched by their other fields only" : "") +
				(A.n_skipped ? "; " + A.n_skipped + " unusable lines of results.jsonl skipped" : "") + ".";
			el("cells-more").textContent = R.matched > R.rows.length ? "The first " + R.rows.length + " matches are shown; narrow the filter for the rest." : "";
			state.lastMS = performance.now() - t0;
			state.serverMS = R.took_ms;
			state.matched = R.matched;
			state.ready = true;
			document.documentElement.dataset.rendered = String(seq);
		}
		async function detail(row, tr) {
			for (const x of document.querySelectorAll("#cells-table tr.on")) x.classList.remove("on");
			tr.classList.add("on");
			detailLine = row.line;
			const box = el("cell-detail");
			box.hidden = false;
			box.replaceChildren(node("p", "meta", "reading line " + row.line + " of results.jsonl…"));
			let r;
			try {
				r = await getJSON("/api/cell?run=" + encodeURIComponent(run) + "&line=" + row.line);
			} catch (e) {
				box.replaceChildren(node("p", "problem", e.message));
				return;
			}
			if (detailLine !== row.line) return;
			box.replaceChildren();
			box.dataset.line = String(row.line);
			box.appendChild(node("h3", null, row.group + " · " + row.prompt + " · repetition " + row.repetition));
			const a = link("/run/" + encodeURIComponent(run) + "/answers.html#" + new URLSearchParams({ p: row.prompt, r: String(row.repetition) }), "on answers.html, beside the other groups");
			box.appendChild(a);
			const part = (label, text) => {
				if (text == null || text === "") return;
				box.appendChild(node("div", "label", label));
				box.appendChild(node("pre", null, typeof text === "string" ? text : JSON.stringify(text, null, 1)));
			};
			part("status", r.availability_status + (r.failure_type ? ": " + r.failure_type : ""));
			part("violation", r.violation);
			part("error", r.error_message);
			part("answer", r.raw_output);
			part("tool calls", r.tool_call_details && r.tool_call_details.length ? r.tool_call_details : null);
			part("turns", r.turn_details && r.turn_details.length ? r.turn_details : null);
		}
		let timer = 0;
		for (const id of Object.values(f)) el(id).addEventListener("change", load);
		el("f-text").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(load, 150); });
		state.load = load;
		await load();
	}

	(document.body.dataset.page === "runs" ? runsPage() : cellsPage()).then(() => {
		state.ready = true;
		document.documentElement.dataset.ready = "true";
	}, e => {
		state.error = String(e.message || e);
		const p = node("p", "problem", "bench view: " + state.error);
		document.querySelector("main").prepend(p);
		document.documentElement.dataset.ready = "true";
	});
})();
