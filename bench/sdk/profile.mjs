// V8 CPU profiles of a Worker served by Miniflare, through workerd's inspector (the Chrome
// DevTools protocol): used by run.mjs with SDK_BENCH_PROFILE to see where a scenario's
// time goes, function by function.

/** Connects to the inspector of the named Worker; start() and stop() bracket a profile. */
export async function connectProfiler(inspectorPort, workerName) {
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json();
  const target = targets.find((candidate) => candidate.webSocketDebuggerUrl.endsWith(`/core:user:${workerName}`));
  if (!target)
    throw new Error(`no inspector target for ${workerName}: ${targets.map((candidate) => candidate.webSocketDebuggerUrl).join(', ')}`);
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let lastId = 0;
  const pending = new Map();
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  };
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      const id = ++lastId;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await send('Profiler.enable');
  return {
    start: () => send('Profiler.start'),
    stop: async () => (await send('Profiler.stop')).profile,
    heapUsage: () => send('Runtime.getHeapUsage'),
    close: () => socket.close(),
  };
}

/**
 * Self time per function over several profiles, in µs per request, busiest first. Sample
 * times come from the profile's own timeDeltas, so the sampling interval does not matter.
 */
export function summariseProfiles(profiles, top = 20) {
  const byFunction = new Map();
  let requests = 0;
  for (const { profile, requests: count } of profiles) {
    requests += count;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    profile.samples.forEach((nodeId, index) => {
      const frame = nodes.get(nodeId).callFrame;
      const name = `${frame.functionName || '(anonymous)'}${frame.url ? ` ${frame.url.split('/').pop()}:${frame.lineNumber + 1}` : ''}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + (profile.timeDeltas[index + 1] ?? 0));
    });
  }
  return [...byFunction]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, micros]) => `${(micros / requests).toFixed(1).padStart(8)}  ${name}`)
    .join('\n');
}
