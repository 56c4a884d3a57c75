// A loopback HTTP server for the tests: answers each request with the next
// scripted reply and records what it received.
import http from "node:http";

/**
 * @param {Array<{status?: number, headers?: Record<string,string>, body?: string, destroy?: boolean}>} script
 *   replies in order; the last one repeats. destroy drops the connection (a network error).
 */
export async function startServer(script) {
  const requests = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const r = script[Math.min(n++, script.length - 1)];
      if (r.destroy) {
        req.socket.destroy();
        return;
      }
      res.writeHead(r.status ?? 200, { "Content-Type": "application/json", ...r.headers });
      res.end(r.body ?? "");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** An in-memory Web Storage. */
export function memoryStorage() {
  const m = new Map();
  return {
    getItem: (k) => (m.has(k) ? m.get(k) : null),
    setItem: (k, v) => m.set(k, String(v)),
    removeItem: (k) => m.delete(k),
    map: m,
  };
}
