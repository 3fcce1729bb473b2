// TEMPORARY: relative paths that still reach into another package's files, as
// "file -> specifier". Each goes when its file uses a declared dependency instead (an `exports`
// entry of the package it reaches, @sdk/docs for the reference pages, a shared test-helpers
// package for the process harness). This list only shrinks.
export const temporaryReachIns: string[] = [];
