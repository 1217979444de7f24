/**
 * @file random.mjs: seeded random numbers and random feedforward heads for the playground.
 *
 * mulberry32 (a small seeded generator; not numpy's, so the same seed draws other graphs in
 * Python) and random heads drawn as `bparallel.graphs.random_feedforward_adjacency` draws
 * them. The model explorer draws its fresh sequences with the same generator.
 */

import { sortEdges } from "./toydag.mjs";

// ---------------------------------------------------------------------- random graphs

/**
 * mulberry32: a small, fast, seeded PRNG with uniform floats in [0, 1).
 * (Not numpy's generator: the same seed draws different graphs in Python.)
 * @param {number} seed any integer (taken mod 2^32)
 * @returns {() => number}
 */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Random feedforward heads with the unique sink `n-1`, as
 * `bparallel.graphs.random_feedforward_adjacency`: each forward edge `j -> i` (`j < i`) is
 * present with probability `density`; a node left without one gets an edge to a uniformly
 * chosen later node, so `n-1` is the only sink (Definition 2.2).
 * @param {number} count number of heads
 * @param {number} n number of nodes
 * @param {number} density in [0, 1]
 * @param {number} seed
 * @returns {Array<Array<[number, number]>>} one sorted edge list per head
 */
export function randomFeedforwardHeads(count, n, density, seed) {
  const rand = mulberry32(seed);
  const heads = [];
  for (let b = 0; b < count; b++) {
    const edges = [];
    const hasForward = new Array(n).fill(false);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const r = rand();
        if (j < i && r < density) {
          edges.push([j, i]);
          hasForward[j] = true;
        }
      }
    }
    for (let j = 0; j < n - 1; j++) {
      if (!hasForward[j]) edges.push([j, j + 1 + Math.floor(rand() * (n - 1 - j))]);
    }
    heads.push(sortEdges(edges));
  }
  return heads;
}
