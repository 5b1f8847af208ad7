// The node-project tests (`*.node.test.ts`) run in Node, but this project loads no @types/node
// (its Worker types would clash with it): declare the little of Node's globals they read.
declare var process: { env: Record<string, string | undefined> };
