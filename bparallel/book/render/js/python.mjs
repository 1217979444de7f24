/**
 * @file python.mjs: numbers as Python prints them, and a playground state as Python code.
 *
 * `pyFormatG` and `pyFormatFixed` write a float as Python's `format(x, ".6g")` and
 * `f"{x:.Nf}"` do (the playground and the model explorer show numbers as the package's
 * tables do); `toPython` writes the code that rebuilds a playground state with
 * `bparallel.book.playground` (tested: it runs, and gives the page's numbers).
 */

import { sortEdges } from "./toydag.mjs";
import { normalizedBeta } from "./state.mjs";

/**
 * Python's `format(x, ".{p}g")`: p significant digits, round half to even on the exact
 * binary value, trailing zeros removed, exponent form below 1e-4 or from 10^p.
 * @param {number} x finite
 * @param {number} [p]
 * @returns {string}
 */
export function pyFormatG(x, p = 6) {
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const sign = x < 0 ? "-" : "";
  const ax = Math.abs(x);
  let [mant, expText] = ax.toExponential(p - 1).split("e"); // JS rounds exact ties up
  const exact = ax.toExponential(Math.min(100, p + 60)).split("e");
  const tail = exact[0].replace(".", "").slice(p);
  const lastKept = Number(exact[0].replace(".", "")[p - 1]);
  if (exact[1] === expText && /^50*$/.test(tail) && lastKept % 2 === 0) {
    mant = exact[0].replace(".", "").slice(0, p).replace(/^(\d)/, "$1."); // tie: keep the even digit
  }
  const exp = Number(expText);
  const digits = mant.replace(".", "").replace(/0+$/, "") || "0";
  if (exp < -4 || exp >= p) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const frac = digits.slice(exp + 1);
  return frac ? `${sign}${whole}.${frac}` : `${sign}${whole}`;
}

/**
 * Python's `format(x, ".{digits}f")`: like `toFixed`, but an exact tie (such as 0.03125 to
 * four digits) rounds to the even digit, as Python does, instead of away from zero.
 * @param {number} x finite, |x| < 1e21
 * @param {number} digits 0..50
 * @returns {string}
 */
export function pyFormatFixed(x, digits) {
  const exact = x.toFixed(Math.min(100, digits + 40)); // exact for the binary fractions here
  const [whole, frac] = exact.split(".");
  const rest = frac.slice(digits);
  const last = digits > 0 ? frac[digits - 1] : whole[whole.length - 1];
  if (/^50*$/.test(rest) && Number(last) % 2 === 0) {
    const kept = digits > 0 ? `${whole}.${frac.slice(0, digits)}` : whole;
    return kept;
  }
  return x.toFixed(digits);
}

/**
 * The Python code that rebuilds this configuration with `bparallel`: the same text as
 * `bparallel.book.playground.to_python`.
 * @param {PlaygroundState} state
 * @returns {string}
 */
export function toPython(state) {
  const heads = state.heads
    .map((edges) => `[${sortEdges(edges).map(([j, i]) => `(${j}, ${i})`).join(", ")}]`)
    .join(",\n    ");
  const beta = normalizedBeta(state.raw_beta).map((b) => pyFormatG(b, 6)).join(", ");
  return (
    "import numpy as np\n" +
    "from bparallel.graphs import diffusion_matrix\n" +
    "from bparallel.fidelity import fidelity_report\n" +
    `n, horizon = ${state.n}, ${state.horizon}\n` +
    `heads = [\n    ${heads},\n]\n` +
    `beta = np.array([${beta}])\n` +
    "deltas = np.stack([diffusion_matrix(e, n) for e in heads])\n" +
    "report = fidelity_report(deltas, beta, horizon)\n"
  );
}
