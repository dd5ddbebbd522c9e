/**
 * The seam between the CLI and the lab, checked from the CLI's side: the lab never imports
 * the CLI (one direction), so nothing but this test says that lab/entry.ts gives what
 * `conndrain lab` and `conndrain demo` load.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lab } from '../../lab/entry.js';
import { LAB_SCENARIOS } from '../command-listings.js';
import type { LabEntry } from './lab.js';

test('lab/entry.ts has the shape the CLI loads', () => {
  const entry: LabEntry = lab;
  assert.equal(typeof entry.runScenario, 'function');
  assert.equal(typeof entry.runDemo, 'function');
  assert.equal(typeof entry.findProblems, 'function');
});

test('the scenarios the CLI lists are the lab\'s', () => {
  assert.deepEqual([...lab.scenarios], [...LAB_SCENARIOS]);
});
