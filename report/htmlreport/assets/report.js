// report.js draws report.html's plots from the JSON inlined in #bench-data.
// Tables are rendered by the Go template; this script only draws: the box
// plots, the pass-matrix heatmap (plain canvases, so 100 x 100 cells are one
// element, not ten thousand) and the percentile curves and resource timeline
// (uPlot). Text that came from a model or a provider is only ever set with
// textContent, never parsed as HTML.
(function () {
	"use strict";

	const t0 = performance.now();
	const D = JSON.parse(document.getElementById("bench-data").textContent);
	const timings = { script_start: t0, json_parse: performance.now() - t0 };
	const tip = document.getElementById("tip");
	const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];
	const FONT = "11px system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif";
	const MARKS = [[0, "p50", "#111111"], [1, "p95", "#dd6b20"], [2, "p99", "#c53030"]];
	const SHOWN_CURVES = 8;
	const LOG_SPREAD = 20;

	let drawn = [];
	let charts = [];
	let timelineChart = null;

	function color(i) {
		return i < PALETTE.length ? PALETTE[i] : "hsl(" + ((i * 137.508) % 360).toFixed(1) + ",60%,42%)";
	}

	function fmtMS(v) {
		if (v == null) return "–";
		return v < 10 ? v.toFixed(1) + " ms" : v.toFixed(0) + " ms";
	}

	function fmtValue(m, v) {
		if (v == null) return "–";
		return m.unit === "ms" ? fmtMS(v) : v.toFixed(1) + " " + m.unit;
	}

	function fmtAxis(m, v) {
		if (m.unit !== "ms") return trimNum(v);
		if (v >= 1000) return trimNum(v / 1000) + " s";
		return trimNum(v) + " ms";
	}

	function trimNum(v) {
		if (v === 0) return "0";
		const a = Math.abs(v);
		const s = a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toPrecision(2);
		return s.indexOf(".") >= 0 ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
	}

	function fmtBytes(v) {
		if (v == null) return "–";
		const units = ["B", "KiB", "MiB", "GiB", "TiB"];
		let i = 0;
		while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
		return i === 0 ? v.toFixed(0) + " B" : v.toFixed(1) + " " + units[i];
	}

	// ---- tooltip -------------------------------------------------------------

	function showTip(ev, text) {
		tip.textContent = text;
		tip.hidden = false;
		const pad = 14, w = tip.offsetWidth, h = tip.offsetHeight;
		let x = ev.clientX + pad, y = ev.clientY + pad;
		if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - w - pad);
		if (y + h > window.innerHeight - 4) y = Math.max(4, ev.clientY - h - pad);
		tip.style.left = x + "px";
		tip.style.top = y + "px";
	}

	function hideTip() { tip.hidden = true; }

	// ---- canvas helpers ------------------------------------------------------

	function newCanvas(el, w, h, label) {
		const dpr = window.devicePixelRatio || 1;
		const cv = document.createElement("canvas");
		cv.className = "own";
		if (label) {
			cv.setAttribute("role", "img");
			cv.setAttribute("aria-label", label);
		}
		cv.width = Math.round(w * dpr);
		cv.height = Math.round(h * dpr);
		cv.style.width = w + "px";
		cv.style.height = h + "px";
		el.appendChild(cv);
		const ctx = cv.getContext("2d");
		ctx.scale(dpr, dpr);
		ctx.font = FONT;
		return { cv, ctx };
	}

	function ellipsize(ctx, text, max) {
		if (ctx.measureText(text).width <= max) return text;
		let lo = 0, hi = text.length;
		while (lo < hi) {
			const mid = (lo + hi + 1) >> 1;
			if (ctx.measureText(text.slice(0, mid) + "…").width <= max) lo = mid; else hi = mid - 1;
		}
		return text.slice(0, lo) + "…";
	}

	function labelWidth(ctx, labels, lo, hi) {
		let w = 0;
		// Measuring every label is linear and cheap; cap the measured length.
		for (const l of labels) w = Math.max(w, ctx.measureText(l.length > 60 ? l.slice(0, 60) : l).width);
		return Math.max(lo, Math.min(hi, Math.ceil(w) + 12));
	}

	// spread returns the smallest positive and the largest value of a metric
	// over every group, and whether a log axis is warranted.
	function spread(m) {
		let lo = Infinity, hi = -Infinity, minAll = Infinity;
		for (const d of m.dists) {
			if (!d.q) continue;
			for (const v of [d.q[0], d.q[100]]) {
				if (v > 0 && v < lo) lo = v;
				if (v > hi) hi = v;
				if (v < minAll) minAll = v;
			}
		}
		if (!isFinite(hi)) return null;
		const log = isFinite(lo) && hi / lo > LOG_SPREAD;
		return { lo: lo, hi: hi, min: minAll, log: log };
	}

	function niceTicks(lo, hi, n) {
		const span = hi - lo;
		if (!(span > 0)) return [lo];
		let step = Math.pow(10, Math.floor(Math.log10(span / n)));
		const err = (n / span) * step;
		if (err <= 0.15) step *= 10; else if (err <= 0.35) step *= 5; else if (err <= 0.75) step *= 2;
		const out = [];
		for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(+t.toPrecision(12));
		return out;
	}

	function logTicks(lo, hi) {
		const a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi));
		const mult = b - a <= 3 ? [1, 2, 5] : [1];
		const out = [];
		for (let k = a; k <= b; k++) for (const m of mult) {
			const t = m * Math.pow(10, k);
			if (t >= lo * 0.999 && t <= hi * 1.001) out.push(+t.toPrecision(12));
		}
		return out;
	}

	function axisScale(sp, x0, x1) {
		if (sp.log) {
			const a = Math.log10(sp.lo), b = Math.log10(sp.hi === sp.lo ? sp.lo * 10 : sp.hi);
			return { log: true, ticks: logTicks(sp.lo, Math.pow(10, b)), pos: v => x0 + (Math.log10(Math.max(v, sp.lo)) - a) / (b - a) * (x1 - x0) };
		}
		const lo = Math.min(0, sp.min), hi = sp.hi > lo ? sp.hi * 1.02 : lo + 1;
		return { log: false, ticks: niceTicks(lo, hi, 8), pos: v => x0 + (v - lo) / (hi - lo) * (x1 - x0) };
	}

	// ---- box plots -----------------------------------------------------------

	function boxPlot(el, m) {
		const sp = spread(m);
		const n = D.groups.length;
		const rowH = n > 40 ? 13 : 20;
		const W = Math.max(480, el.clientWidth || 1000);
		const top = 22, bottom = 22;
		const H = top + n * rowH + bottom;
		const { cv, ctx } = newCanvas(el, W, H, "Box plots of " + m.title.toLowerCase() + " for " + n + " groups; the ranking table has the figures");
		const labels = D.groups.map(g => g.label);
		const labelW = labelWidth(ctx, labels, 120, 300);
		const x0 = labelW + 8, x1 = W - 24;
		const sc = axisScale(sp, x0, x1);

		ctx.textBaseline = "middle";
		for (let i = 0; i < n; i++) {
			if (i % 2 === 1) {
				ctx.fillStyle = "#f5f7fa";
				ctx.fillRect(0, top + i * rowH, W, rowH);
			}
		}
		ctx.strokeStyle = "#e2e8f0";
		ctx.fillStyle = "#5f6b7a";
		ctx.textAlign = "center";
		for (const t of sc.ticks) {
			const x = Math.round(sc.pos(t)) + 0.5;
			ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, H - bottom); ctx.stroke();
			ctx.fillText(fmtAxis(m, t), x, top / 2);
			ctx.fillText(fmtAxis(m, t), x, H - bottom / 2);
		}
		ctx.textAlign = "left";
		const bh = Math.max(6, Math.round(rowH * 0.62));
		for (let i = 0; i < n; i++) {
			const cy = top + i * rowH + rowH / 2;
			ctx.fillStyle = "#1d2129";
			ctx.fillText(ellipsize(ctx, labels[i], labelW - 4), 4, cy);
			const d = m.dists[i];
			if (!d.q) {
				ctx.fillStyle = "#8a94a3";
				ctx.fillText("no successful cells", x0 + 4, cy);
				continue;
			}
			const q = d.q, c = color(i);
			ctx.strokeStyle = "#6b7280";
			ctx.lineWidth = 1;
			ctx.beginPath(); ctx.moveTo(sc.pos(q[0]), cy); ctx.lineTo(sc.pos(q[100]), cy); ctx.stroke();
			for (const e of [q[0], q[100]]) {
				const x = sc.pos(e);
				ctx.beginPath(); ctx.moveTo(x, cy - bh / 4); ctx.lineTo(x, cy + bh / 4); ctx.stroke();
			}
			const bx = sc.pos(q[25]), bw = Math.max(1, sc.pos(q[75]) - bx);
			ctx.globalAlpha = 0.35; ctx.fillStyle = c; ctx.fillRect(bx, cy - bh / 2, bw, bh);
			ctx.globalAlpha = 1; ctx.strokeStyle = c; ctx.strokeRect(bx, cy - bh / 2, bw, bh);
			const marks = m.marks[i];
			for (const [k, , col] of MARKS) {
				const v = marks[k];
				if (v == null) continue;
				const x = sc.pos(v);
				ctx.strokeStyle = col;
				ctx.lineWidth = k === 0 ? 2.5 : 2;
				ctx.beginPath(); ctx.moveTo(x, cy - bh / 2 - 1); ctx.lineTo(x, cy + bh / 2 + 1); ctx.stroke();
			}
			ctx.lineWidth = 1;
		}
		if (sc.log) {
			ctx.fillStyle = "#8a94a3";
			ctx.textAlign = "right";
			ctx.fillText("log scale", W - 4, H - bottom / 2);
		}

		cv.addEventListener("mousemove", ev => {
			const r = cv.getBoundingClientRect();
			const i = Math.floor((ev.clientY - r.top - top) / rowH);
			if (i < 0 || i >= n) return hideTip();
			showTip(ev, boxText(m, i));
		});
		cv.addEventListener("mouseleave", hideTip);
		el.dataset.rows = String(n);
		el.dataset.log = String(sc.log);
	}

	function boxText(m, i) {
		const d = m.dists[i], mk = m.marks[i];
		const lines = [D.groups[i].label + " · " + m.title];
		if (!d.q) return lines.concat(["no successful cells with this metric"]).join("\n");
		lines.push("n " + d.n + " · mean " + fmtValue(m, m.mean[i]));
		lines.push("p50 " + fmtValue(m, mk[0]) + " · p95 " + fmtValue(m, mk[1]) + " · p99 " + fmtValue(m, mk[2]));
		lines.push("min " + fmtValue(m, d.q[0]) + " · p25 " + fmtValue(m, d.q[25]) + " · p75 " + fmtValue(m, d.q[75]) + " · max " + fmtValue(m, d.q[100]));
		return lines.join("\n");
	}

	// ---- percentile curves (uPlot) -------------------------------------------

	function pctChart(el, m) {
		const sp = spread(m);
		const xs = [];
		for (let p = 0; p <= 100; p++) xs.push(p);
		const data = [xs];
		const series = [{ label: "percentile", value: (u, v) => v == null ? "–" : "p" + v }];
		let shown = 0;
		m.dists.forEach((d, i) => {
			data.push(d.q ? d.q.map(v => (sp.log && v <= 0) ? null : v) : xs.map(() => null));
			const show = !!d.q && shown < SHOWN_CURVES;
			if (show) shown++;
			series.push({
				label: D.groups[i].label, stroke: color(i), width: 1.5, show: show,
				points: { show: false }, value: (u, v) => fmtValue(m, v),
			});
		});
		// Stretch the tail: 0-90 takes about half the width, 90-99 more than a
		// third, 99-100 the rest.
		const fwd = p => -Math.log10(1 - p / 101);
		const bwd = v => 101 * (1 - Math.pow(10, -v));
		const opts = {
			width: Math.max(480, el.clientWidth || 1000),
			height: 300,
			scales: {
				x: { time: false, distr: 100, fwd: fwd, bwd: bwd, range: () => [0, 100] },
				y: sp.log ? { distr: 3, log: 10 } : { range: (u, lo, hi) => [Math.min(0, lo), hi > 0 ? hi * 1.05 : 1] },
			},
			axes: [
				{ label: "percentile", splits: () => [0, 50, 90, 95, 99, 100], filter: (u, s) => s, values: (u, s) => s.map(v => v == null ? "" : v + "%") },
				{ label: m.title + (sp.log ? " (log)" : ""), size: 70, values: (u, s) => s.map(v => v == null ? "" : fmtAxis(m, v)) },
			],
			series: series,
			legend: { live: true },
			cursor: { points: { show: false } },
			hooks: { draw: [markPercentiles] },
		};
		charts.push(new uPlot(opts, data, el));
		el.dataset.curves = String(shown);
		el.dataset.log = String(sp.log);
	}

	function markPercentiles(u) {
		const ctx = u.ctx, pr = uPlot.pxRatio || 1, b = u.bbox;
		ctx.save();
		ctx.font = (11 * pr) + "px system-ui, sans-serif";
		ctx.setLineDash([4 * pr, 3 * pr]);
		for (const [p, name, col] of [[50, "p50", "#111111"], [95, "p95", "#dd6b20"], [99, "p99", "#c53030"]]) {
			const x = Math.round(u.valToPos(p, "x", true));
			ctx.strokeStyle = col;
			ctx.lineWidth = pr;
			ctx.beginPath(); ctx.moveTo(x, b.top); ctx.lineTo(x, b.top + b.height); ctx.stroke();
			ctx.fillStyle = col;
			ctx.fillText(name, x - 26 * pr, b.top + 12 * pr);
		}
		ctx.restore();
	}

	// ---- pass matrix heatmap -------------------------------------------------

	const STOPS = [[0, [215, 48, 39]], [0.5, [254, 224, 139]], [1, [26, 152, 80]]];

	function passColor(r) {
		for (let k = 1; k < STOPS.length; k++) {
			const [b, cb] = STOPS[k];
			if (r <= b) {
				const [a, ca] = STOPS[k - 1];
				const t = (r - a) / (b - a);
				return "rgb(" + ca.map((v, j) => Math.round(v + (cb[j] - v) * t)).join(",") + ")";
			}
		}
		return "rgb(26,152,80)";
	}

	// The pass colour in steps of 1 %, computed once.
	const PASS_COLOURS = [];
	for (let i = 0; i <= 100; i++) PASS_COLOURS.push(passColor(i / 100));
	// A cell whose answers no judge or command validator gave a verdict on.
	const CHECK_ERROR = "#f2b134";

	function cellAt(g, p) {
		const w = D.cell_width, o = (g * D.prompts.length + p) * w;
		const c = D.cells;
		return { total: c[o], success: c[o + 1], judged: c[o + 2], passed: c[o + 3], notRun: c[o + 4], why: c[o + 5], detail: c[o + 6], checkErrors: c[o + 7] };
	}

	function cellColor(c) {
		if (c.total === 0) return null;
		if (c.judged > 0) return PASS_COLOURS[Math.round(100 * c.passed / c.judged)];
		if (c.checkErrors > 0) return CHECK_ERROR;
		if (c.success > 0) return "#9ecae1";
		if (c.notRun === c.total) return "#cfd4da";
		return "#54278f";
	}

	function heatmap(el) {
		const G = D.groups.length, P = D.prompts.length;
		const W = Math.max(480, el.clientWidth || 1000);
		const probe = newCanvas(el, 1, 1);
		const promptLabels = D.prompts.map(p => p.name ? p.id + " " + p.name : p.id);
		const labelW = labelWidth(probe.ctx, promptLabels, 60, 260);
		const groupW = labelWidth(probe.ctx, D.groups.map(g => g.label), 40, 220);
		el.removeChild(probe.cv);
		// Column labels slant at 45° while the columns are wide enough to
		// read them so; narrower columns (many groups) get upright labels,
		// one per column, which also frees the width the slant overhangs.
		let slant = Math.PI / 4;
		let cw = Math.max(6, Math.min(56, Math.floor((W - labelW - groupW * Math.cos(slant) - 8) / Math.max(1, G))));
		if (cw < 14) {
			slant = Math.PI / 2;
			cw = Math.max(6, Math.min(13, Math.floor((W - labelW - 8) / Math.max(1, G))));
		}
		const ch = Math.max(8, Math.min(22, cw));
		const sizedFont = px => FONT.replace("11px", Math.max(7, Math.min(11, px)) + "px");
		const headerH = Math.ceil(groupW * Math.sin(slant)) + 10;
		const gridW = G * cw;
		const cvW = Math.min(W, Math.ceil(labelW + gridW + groupW * Math.cos(slant) + 12));
		const H = headerH + P * ch + 2;
		const { cv, ctx } = newCanvas(el, cvW, H, "Pass matrix of " + P + " prompts by " + G + " groups; summary.md has it as a table");

		// Column labels, slanted so that 100 of them fit.
		ctx.fillStyle = "#1d2129";
		ctx.textBaseline = "middle";
		ctx.font = sizedFont(cw - 1);
		const colStep = cw >= 7 ? 1 : Math.ceil(7 / cw);
		for (let g = 0; g < G; g += colStep) {
			ctx.save();
			ctx.translate(labelW + g * cw + cw / 2, headerH - 4);
			ctx.rotate(-slant);
			ctx.fillText(ellipsize(ctx, D.groups[g].label, groupW - 6), 0, 0);
			ctx.restore();
		}
		// Row labels.
		ctx.font = sizedFont(ch - 1);
		ctx.textAlign = "right";
		const rowStep = ch >= 8 ? 1 : Math.ceil(8 / ch);
		for (let p = 0; p < P; p += rowStep) {
			ctx.fillText(ellipsize(ctx, promptLabels[p], labelW - 8), labelW - 6, headerH + p * ch + ch / 2);
		}
		// Cells, batched by colour: setting a fill style is the costly
		// part of 10,000 small rectangles, so each colour is set once and
		// its cells go into one path.
		const gap = cw >= 8 ? 1 : 0;
		const text = cw >= 40 && ch >= 16;
		const byColour = new Map();
		const empty = [], corners = [];
		for (let g = 0; g < G; g++) {
			for (let p = 0; p < P; p++) {
				const c = cellAt(g, p);
				const col = cellColor(c);
				const x = labelW + g * cw, y = headerH + p * ch;
				if (!col) { empty.push(x, y); continue; }
				let list = byColour.get(col);
				if (!list) byColour.set(col, list = []);
				list.push(x, y);
				if (c.success > 0 && c.success < c.total) corners.push(x, y);
			}
		}
		for (const [col, xy] of byColour) {
			ctx.fillStyle = col;
			ctx.beginPath();
			for (let i = 0; i < xy.length; i += 2) ctx.rect(xy[i], xy[i + 1], cw - gap, ch - gap);
			ctx.fill();
		}
		ctx.strokeStyle = "#e2e8f0";
		ctx.beginPath();
		for (let i = 0; i < empty.length; i += 2) ctx.rect(empty[i] + 0.5, empty[i + 1] + 0.5, cw - gap - 1, ch - gap - 1);
		ctx.stroke();
		const k = Math.max(3, Math.min(cw, ch) / 3);
		ctx.fillStyle = "rgba(0,0,0,0.55)";
		ctx.beginPath();
		for (let i = 0; i < corners.length; i += 2) {
			const x = corners[i] + cw - gap, y = corners[i + 1];
			ctx.moveTo(x - k, y); ctx.lineTo(x, y); ctx.lineTo(x, y + k); ctx.closePath();
		}
		ctx.fill();
		if (text) {
			ctx.textAlign = "center";
			ctx.font = FONT;
			for (let g = 0; g < G; g++) {
				for (let p = 0; p < P; p++) {
					const c = cellAt(g, p);
					const col = cellColor(c);
					const t = c.judged > 0 ? c.passed + "/" + c.judged : c.checkErrors > 0 ? "check error" : c.success > 0 ? "no check" : "";
					if (!t) continue;
					const r = c.judged > 0 ? c.passed / c.judged : -1;
					ctx.fillStyle = (r > 0.25 && r < 0.8) || col === "#9ecae1" || col === CHECK_ERROR ? "#1d2129" : "#ffffff";
					ctx.fillText(ellipsize(ctx, t, cw - 4), labelW + g * cw + (cw - gap) / 2, headerH + p * ch + (ch - gap) / 2);
				}
			}
		}

		cv.addEventListener("mousemove", ev => {
			const r = cv.getBoundingClientRect();
			const g = Math.floor((ev.clientX - r.left - labelW) / cw);
			const p = Math.floor((ev.clientY - r.top - headerH) / ch);
			if (g < 0 || g >= G || p < 0 || p >= P) return hideTip();
			showTip(ev, cellText(g, p));
		});
		cv.addEventListener("mouseleave", hideTip);
		// A click opens the prompt's answers, side by side, in answers.html.
		cv.style.cursor = "pointer";
		cv.addEventListener("click", ev => {
			const r = cv.getBoundingClientRect();
			const p = Math.floor((ev.clientY - r.top - headerH) / ch);
			if (p < 0 || p >= P) return;
			window.location.assign(document.getElementById("answers-link").getAttribute("href") + "#p=" + encodeURIComponent(D.prompts[p].id));
		});
		el.dataset.cellW = String(cw);
		el.dataset.cellH = String(ch);
		el.dataset.left = String(labelW);
		el.dataset.top = String(headerH);
	}

	function cellText(g, p) {
		const c = cellAt(g, p), pr = D.prompts[p];
		const lines = [(pr.name ? pr.id + " " + pr.name : pr.id) + " × " + D.groups[g].label];
		if (c.total === 0) return lines.concat(["not run in this group"]).join("\n");
		if (c.judged > 0) lines.push("checks: " + c.passed + "/" + c.judged + " passed");
		if (c.checkErrors > 0) lines.push(c.checkErrors + (c.checkErrors === 1 ? " check error" : " check errors") + ": a judge or command validator gave no verdict (not judged, never a pass)");
		else if (c.judged === 0 && c.success > 0) lines.push("no check (the prompt has no validator)");
		const failed = c.total - c.success - c.notRun;
		let cells = c.total + (c.total === 1 ? " cell: " : " cells: ") + c.success + " succeeded";
		if (failed > 0) cells += ", " + failed + " did not";
		if (c.notRun > 0) cells += ", " + c.notRun + " never reached the model";
		lines.push(cells);
		if (c.success < c.total && c.why >= 0) lines.push("most frequent reason: " + D.strings[c.why]);
		if (c.detail >= 0) lines.push((c.judged > c.passed ? "violation: " : "error: ") + D.strings[c.detail]);
		return lines.join("\n");
	}

	// ---- cost against pass rate ----------------------------------------------

	function fmtUSD(v) {
		if (v === 0) return "$0";
		const a = Math.abs(v);
		if (a >= 100) return "$" + v.toFixed(0);
		if (a >= 1) return "$" + v.toFixed(2);
		return "$" + v.toFixed(Math.max(0, 3 - Math.floor(Math.log10(a))));
	}

	// costPlot draws each priced group as a dot: mean cost of a cell on x
	// (logarithmic when the costs span more than 20×), objective pass rate
	// on y. Groups with no check have no pass rate and sit on the axis.
	function costPlot(el) {
		const pts = D.cost;
		const W = Math.max(480, Math.min(el.clientWidth || 900, 900)), H = 320;
		const left = 56, right = 20, top = 16, bottom = 40;
		const { cv, ctx } = newCanvas(el, W, H, "Cost per cell against pass rate for " + pts.length + " groups; the ranking table has the figures");
		let lo = Infinity, hi = -Infinity;
		for (const p of pts) { if (p.per_cell > 0 && p.per_cell < lo) lo = p.per_cell; if (p.per_cell > hi) hi = p.per_cell; }
		const sp = isFinite(lo) ? { lo: lo, hi: hi, min: Math.min(0, lo), log: hi / lo > LOG_SPREAD } : { lo: 0, hi: 1, min: 0, log: false };
		const sc = axisScale(sp, left, W - right);
		const y = r => top + (1 - r) * (H - top - bottom);
		ctx.strokeStyle = "#e2e8f0";
		ctx.fillStyle = "#5f6b7a";
		ctx.textAlign = "right";
		ctx.textBaseline = "middle";
		for (const r of [0, 0.25, 0.5, 0.75, 1]) {
			ctx.beginPath(); ctx.moveTo(left, Math.round(y(r)) + 0.5); ctx.lineTo(W - right, Math.round(y(r)) + 0.5); ctx.stroke();
			ctx.fillText(Math.round(r * 100) + "%", left - 6, y(r));
		}
		ctx.textAlign = "center";
		for (const t of sc.ticks) {
			const x = Math.round(sc.pos(t)) + 0.5;
			ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, H - bottom); ctx.stroke();
			ctx.fillText(fmtUSD(t), x, H - bottom + 12);
		}
		ctx.fillText("mean cost of a cell" + (sc.log ? " (log)" : ""), (left + W - right) / 2, H - 8);
		const dots = [];
		pts.forEach((p, i) => {
			const x = sc.pos(Math.max(p.per_cell, sp.log ? sp.lo : p.per_cell)), yy = y(p.pass == null ? 0 : p.pass);
			ctx.fillStyle = color(i);
			ctx.beginPath(); ctx.arc(x, yy, 6, 0, 2 * Math.PI); ctx.fill();
			ctx.strokeStyle = "#ffffff"; ctx.lineWidth = 1.5; ctx.stroke(); ctx.lineWidth = 1;
			if (pts.length <= 12) {
				ctx.fillStyle = "#1d2129";
				ctx.textAlign = x > W - 200 ? "right" : "left";
				ctx.fillText(p.label, x + (x > W - 200 ? -10 : 10), yy - 9);
			}
			dots.push([x, yy, p]);
		});
		cv.addEventListener("mousemove", ev => {
			const r = cv.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
			let best = null, bd = 144;
			for (const d of dots) { const dd = (d[0] - mx) ** 2 + (d[1] - my) ** 2; if (dd < bd) { bd = dd; best = d[2]; } }
			if (!best) return hideTip();
			showTip(ev, best.label + "\npass rate " + (best.pass == null ? "– (no check)" : (best.pass * 100).toFixed(1) + "%") +
				"\nmean cost of a cell " + fmtUSD(best.per_cell) + " · total " + fmtUSD(best.total));
		});
		cv.addEventListener("mouseleave", hideTip);
		el.dataset.points = String(pts.length);
	}

	// ---- resource timeline ---------------------------------------------------

	function timeline(el) {
		const T = D.timeline;
		const data = [T.t];
		const series = [{}];
		const scales = { x: { time: true } };
		const axes = [{}];
		const used = {};
		T.series.forEach((s, i) => {
			data.push(bridgeHoles(T.t, s.values));
			used[s.scale] = true;
			series.push({
				label: s.label, scale: s.scale, stroke: color(i), width: 1.25, spanGaps: false,
				points: { show: false },
				value: (u, v) => v == null ? "–" : s.scale === "pct" ? v.toFixed(1) + "%" : fmtBytes(v),
			});
		});
		if (used.pct) {
			scales.pct = { auto: false, range: [0, 100] };
			axes.push({ scale: "pct", label: "CPU", size: 56, values: (u, s) => s.map(v => v + "%") });
		}
		if (used.bytes) {
			scales.bytes = { range: (u, lo, hi) => [0, hi > 0 ? hi * 1.1 : 1] };
			// Ticks at powers of two (1, 2, 4, 8 GiB), as memory is counted.
			const incrs = [];
			for (let k = 10; k <= 50; k++) incrs.push(Math.pow(2, k));
			axes.push({ scale: "bytes", label: "memory", side: used.pct ? 1 : 3, size: 80, grid: { show: !used.pct }, incrs: incrs, values: (u, s) => s.map(fmtBytes) });
		}
		const opts = {
			width: Math.max(480, el.clientWidth || 1000),
			height: 320,
			scales: scales, axes: axes, series: series,
			cursor: { points: { show: false } },
			hooks: { drawClear: [suiteBands] },
		};
		timelineChart = new uPlot(opts, data, el);
		charts.push(timelineChart);
		el.dataset.points = String(T.t.length);
	}

	// Suites that run at the same time share the time axis, so a series
	// has a hole wherever another suite was sampled. uPlot bridges undefined
	// and breaks the line at null: holes shorter than three of the series'
	// own usual steps become undefined; longer ones (between suites, a
	// server that stopped answering) stay gaps.
	function bridgeHoles(t, values) {
		const idx = [];
		values.forEach((v, i) => { if (v != null) idx.push(i); });
		if (idx.length < 2) return values;
		const steps = idx.slice(1).map((k, j) => t[k] - t[idx[j]]).sort((a, b) => a - b);
		const limit = 3 * steps[steps.length >> 1];
		const out = values.slice();
		for (let j = 1; j < idx.length; j++) {
			const a = idx[j - 1], b = idx[j];
			if (b - a > 1 && t[b] - t[a] <= limit) for (let k = a + 1; k < b; k++) out[k] = undefined;
		}
		return out;
	}

	function suiteBands(u) {
		const ctx = u.ctx, pr = uPlot.pxRatio || 1, b = u.bbox;
		ctx.save();
		ctx.beginPath(); ctx.rect(b.left, b.top, b.width, b.height); ctx.clip();
		ctx.font = (11 * pr) + "px system-ui, sans-serif";
		// Suites of different providers run at the same time: a label goes
		// on the first line whose previous label ends before it starts.
		const laneEnds = [];
		D.timeline.suites.forEach((s, i) => {
			const x0 = u.valToPos(s.start, "x", true), x1 = u.valToPos(s.end, "x", true);
			ctx.fillStyle = i % 2 ? "rgba(160,174,192,0.16)" : "rgba(66,153,225,0.10)";
			ctx.fillRect(x0, b.top, Math.max(pr, x1 - x0), b.height);
			if (x1 - x0 > 60 * pr) {
				const text = s.label.length > 40 ? s.label.slice(0, 39) + "…" : s.label;
				const w = Math.min(ctx.measureText(text).width, x1 - x0 - 8 * pr);
				let lane = laneEnds.findIndex(end => end < x0);
				if (lane < 0) { lane = laneEnds.length; laneEnds.push(0); }
				laneEnds[lane] = x0 + 4 * pr + w + 6 * pr;
				ctx.fillStyle = "#4a5568";
				ctx.fillText(text, x0 + 4 * pr, b.top + (12 + 13 * lane) * pr, x1 - x0 - 8 * pr);
			}
		});
		ctx.restore();
	}

	function wireSuiteRows() {
		const rows = document.querySelectorAll("#resource-table tr[data-suite]");
		for (const tr of rows) {
			tr.addEventListener("click", () => {
				if (!timelineChart) return;
				const s = D.timeline.suites.find(x => x.label === tr.dataset.suite);
				if (!s) return;
				const pad = Math.max(1, (s.end - s.start) * 0.05);
				timelineChart.setScale("x", { min: s.start - pad, max: s.end + pad });
				document.getElementById("resources").scrollIntoView({ block: "start" });
			});
		}
	}

	// ---- capacity curves -----------------------------------------------------

	// capacity draws one sweep: latency against answered requests/s
	// ("latency"), or answered and good requests/s against the offered
	// level ("goodput") with the saturation point marked.
	function capacity(el, kind) {
		const sw = D.sweeps[+el.dataset.sweep];
		const pts = sw.points.filter(p => p.throughput != null);
		let data, series, axes, scales;
		const unit = sw.mode === "rate" ? "req/s offered" : "streams";
		if (kind === "latency") {
			pts.sort((a, b) => a.throughput - b.throughput);
			data = [pts.map(p => p.throughput), pts.map(p => p.ttft_p50), pts.map(p => p.ttft_p99), pts.map(p => p.e2e_p99), pts.map(p => p.itl_p99)];
			series = [{ label: "answered req/s", value: (u, v) => v == null ? "–" : v.toFixed(1) },
				{ label: "TTFT p50", stroke: color(0), width: 1.5, value: (u, v) => fmtMS(v) },
				{ label: "TTFT p99", stroke: color(1), width: 1.5, value: (u, v) => fmtMS(v) },
				{ label: "e2e p99", stroke: color(2), width: 1.5, value: (u, v) => fmtMS(v) },
				{ label: "ITL p99", stroke: color(3), width: 1.5, value: (u, v) => fmtMS(v) }];
			// A metric no stage has (ITL on a server that streams one chunk)
			// is left out rather than drawn as an empty series.
			for (let i = data.length - 1; i > 0; i--) {
				if (data[i].every(v => v == null)) { data.splice(i, 1); series.splice(i, 1); }
			}
			scales = { x: { time: false }, y: { distr: 3 } };
			axes = [{ label: "answered requests/s" }, { label: "ms (log)", size: 60, values: (u, s) => s.map(v => v == null ? "" : trimNum(v)) }];
		} else {
			pts.sort((a, b) => a.level - b.level);
			data = [pts.map(p => p.level), pts.map(p => p.throughput), pts.map(p => p.goodput_rate)];
			series = [{ label: unit, value: (u, v) => v == null ? "–" : trimNum(v) },
				{ label: "answered req/s", stroke: color(0), width: 1.5, value: (u, v) => v == null ? "–" : v.toFixed(1) },
				{ label: "goodput req/s", stroke: color(2), width: 1.5, value: (u, v) => v == null ? "–" : v.toFixed(1) }];
			scales = { x: { time: false }, y: { range: (u, lo, hi) => [0, hi > 0 ? hi * 1.1 : 1] } };
			axes = [{ label: unit }, { label: "requests/s", size: 60 }];
		}
		for (const s of series.slice(1)) s.points = { show: true, size: 6 };
		const opts = {
			width: Math.max(320, (el.clientWidth || 480)),
			height: 280, scales: scales, axes: axes, series: series,
			hooks: kind === "goodput" && sw.saturation != null ? { draw: [u => {
				const ctx = u.ctx, b = u.bbox, x = u.valToPos(sw.saturation, "x", true);
				ctx.save();
				ctx.strokeStyle = "#c53030"; ctx.setLineDash([6, 4]); ctx.lineWidth = 1.5 * (uPlot.pxRatio || 1);
				ctx.beginPath(); ctx.moveTo(x, b.top); ctx.lineTo(x, b.top + b.height); ctx.stroke();
				ctx.fillStyle = "#c53030"; ctx.font = FONT;
				ctx.fillText("saturation", x + 4, b.top + 12);
				ctx.restore();
				// Where the marker was painted, in canvas pixels: a test reads it back.
				el.dataset.saturationPx = Math.round(x) + "," + Math.round(b.top + b.height / 2);
			}] } : {},
		};
		charts.push(new uPlot(opts, data, el));
		el.dataset.points = String(pts.length);
	}

	// searchPlot draws an SLO search: each stage's attainment against its
	// level, with its interval's bounds, the attainment asked (a line
	// across) and the limit found (a dashed line down).
	function searchPlot(el) {
		const sw = D.sweeps[+el.dataset.sweep], s = sw.search;
		const pts = s.points.slice().sort((a, b) => a.level - b.level);
		const pc = v => v == null ? "–" : (100 * v).toFixed(1) + " %";
		const data = [pts.map(p => p.level), pts.map(p => p.attainment), pts.map(p => p.lo), pts.map(p => p.hi)];
		const series = [{ label: s.mode === "rate" ? "requests/s" : "streams", value: (u, v) => v == null ? "–" : trimNum(v) },
			{ label: "attainment", stroke: color(0), width: 0, points: { show: true, size: 7 }, value: (u, v) => pc(v) },
			{ label: "interval low", stroke: color(1), width: 1, dash: [4, 3], points: { show: true, size: 4 }, value: (u, v) => pc(v) },
			{ label: "interval high", stroke: color(1), width: 1, dash: [4, 3], points: { show: true, size: 4 }, value: (u, v) => pc(v) }];
		const opts = {
			width: Math.max(320, (el.clientWidth || 480)), height: 280, series: series,
			scales: { x: { time: false, distr: s.mode === "rate" ? 3 : 1 }, y: { range: [0, 1.02] } },
			axes: [{ label: s.mode === "rate" ? "requests/s (log)" : "streams" }, { label: "attainment", size: 60, values: (u, t) => t.map(v => (100 * v).toFixed(0) + "%") }],
			hooks: { draw: [u => {
				const ctx = u.ctx, b = u.bbox, pr = uPlot.pxRatio || 1;
				ctx.save();
				const y = u.valToPos(s.attainment, "y", true);
				ctx.strokeStyle = "#2f855a"; ctx.lineWidth = 1.5 * pr; ctx.setLineDash([]);
				ctx.beginPath(); ctx.moveTo(b.left, y); ctx.lineTo(b.left + b.width, y); ctx.stroke();
				ctx.fillStyle = "#2f855a"; ctx.font = FONT;
				ctx.fillText("asked " + (100 * s.attainment).toFixed(0) + " %", b.left + 4, y - 4);
				if (s.limit != null) {
					const x = u.valToPos(s.limit, "x", true);
					ctx.strokeStyle = "#c53030"; ctx.setLineDash([6, 4]);
					ctx.beginPath(); ctx.moveTo(x, b.top); ctx.lineTo(x, b.top + b.height); ctx.stroke();
					ctx.fillStyle = "#c53030"; ctx.fillText("limit", x + 4, b.top + 12);
					el.dataset.limitPx = Math.round(x) + "," + Math.round(b.top + b.height / 2);
				}
				ctx.restore();
			}] },
		};
		charts.push(new uPlot(opts, data, el));
		el.dataset.points = String(pts.length);
	}

	// serverPlot draws what a sweep's server said of itself against time
	// (seconds from the first stage's start), the stages as bands: counts
	// on the left, shares (0-100 %) on the right, generated tokens per
	// second on a second right axis.
	function serverPlot(el) {
		const S = D.sweeps[+el.dataset.sweep].server;
		const data = [S.t];
		const series = [{ label: "s", value: (u, v) => v == null ? "–" : v.toFixed(2) + " s" }];
		const used = {};
		S.series.forEach((s, i) => {
			data.push(s.values);
			used[s.scale] = true;
			series.push({ label: s.label, scale: s.scale, stroke: color(i), width: 1.25, points: { show: false },
				value: (u, v) => v == null ? "–" : s.scale === "share" ? (100 * v).toFixed(1) + "%" : s.scale === "rate" ? v.toFixed(0) + "/s" : trimNum(v) });
		});
		const scales = { x: { time: false } };
		const axes = [{ label: "seconds since the first stage began" }];
		if (used.count) {
			scales.count = { range: (u, lo, hi) => [0, hi > 0 ? hi * 1.1 : 1] };
			axes.push({ scale: "count", label: "requests", size: 50 });
		}
		if (used.share) {
			scales.share = { auto: false, range: [0, 1.02] };
			axes.push({ scale: "share", label: "share", side: 1, size: 50, grid: { show: !used.count }, values: (u, t) => t.map(v => (100 * v).toFixed(0) + "%") });
		}
		if (used.rate) {
			scales.rate = { range: (u, lo, hi) => [0, hi > 0 ? hi * 1.1 : 1] };
			axes.push({ scale: "rate", label: "tokens/s", side: 1, size: 60, grid: { show: false } });
		}
		const opts = {
			width: Math.max(480, el.clientWidth || 1000), height: 260, scales: scales, axes: axes, series: series,
			cursor: { points: { show: false } },
			hooks: { drawClear: [u => {
				const ctx = u.ctx, pr = uPlot.pxRatio || 1, b = u.bbox;
				ctx.save();
				ctx.beginPath(); ctx.rect(b.left, b.top, b.width, b.height); ctx.clip();
				ctx.font = (11 * pr) + "px system-ui, sans-serif";
				S.stages.forEach((st, i) => {
					const x0 = u.valToPos(st.start, "x", true), x1 = u.valToPos(st.end, "x", true);
					ctx.fillStyle = i % 2 ? "rgba(160,174,192,0.16)" : "rgba(66,153,225,0.10)";
					ctx.fillRect(x0, b.top, Math.max(pr, x1 - x0), b.height);
					if (x1 - x0 > 30 * pr) { ctx.fillStyle = "#4a5568"; ctx.fillText(st.name, x0 + 3 * pr, b.top + 12 * pr, x1 - x0 - 6 * pr); }
				});
				ctx.restore();
			}] },
		};
		charts.push(new uPlot(opts, data, el));
		el.dataset.points = String(S.t.length);
		el.dataset.series = S.series.map(s => s.key).join(",");
	}

	// ---- driver --------------------------------------------------------------

	function guarded(el, name, fn) {
		const start = performance.now();
		try {
			fn();
			drawn.push(name);
			timings[name] = performance.now() - start;
		} catch (e) {
			console.error("report.html: could not draw " + name + ": " + (e && e.stack || e));
			const p = document.createElement("p");
			p.className = "plot-error";
			p.textContent = "Could not draw this plot: " + (e && e.message || e);
			el.appendChild(p);
		}
	}

	function renderAll() {
		for (const c of charts) c.destroy();
		charts = [];
		timelineChart = null;
		drawn = [];
		const metrics = {};
		for (const m of D.metrics) metrics[m.key] = m;
		for (const el of document.querySelectorAll("[data-plot]")) {
			el.replaceChildren();
			const name = el.dataset.plot;
			if (name.startsWith("box-")) guarded(el, name, () => boxPlot(el, metrics[el.dataset.metric]));
			else if (name.startsWith("pct-")) guarded(el, name, () => pctChart(el, metrics[el.dataset.metric]));
			else if (name === "heatmap") guarded(el, name, () => heatmap(el));
			else if (name.startsWith("capacity-latency-")) guarded(el, name, () => capacity(el, "latency"));
			else if (name.startsWith("capacity-goodput-")) guarded(el, name, () => capacity(el, "goodput"));
			else if (name.startsWith("capacity-search-")) guarded(el, name, () => searchPlot(el));
			else if (name.startsWith("capacity-server-")) guarded(el, name, () => serverPlot(el));
			else if (name === "timeline" && D.timeline) guarded(el, name, () => timeline(el));
			else if (name === "cost" && D.cost) guarded(el, name, () => costPlot(el));
		}
	}

	renderAll();
	wireSuiteRows();
	let resizeTimer = 0, lastWidth = window.innerWidth;
	window.addEventListener("resize", () => {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(() => {
			if (window.innerWidth !== lastWidth) { lastWidth = window.innerWidth; renderAll(); }
		}, 200);
	});
	// For tests and the curious: what was drawn, and when (ms since navigation start).
	window.benchReport = { renderMS: performance.now(), plots: drawn.slice(), timings: timings, data: D,
		redraw: () => { renderAll(); return timings; } };
	document.documentElement.dataset.rendered = "true";
})();
