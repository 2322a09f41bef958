// Requests to this service: JSON in and out; problems (RFC 9457) and network failures become RequestErrors.

import { REQUEST_TIMEOUT_MS, t } from "./state.js";

export class RequestError extends Error {
  constructor(message, { status = 0, problem = null, requestId = null, network = false } = {}) {
    super(message);
    this.status = status;
    this.problem = problem;
    this.requestId = requestId;
    this.network = network;
  }
}

/** A JSON request to this service; problems (RFC 9457) and network failures become RequestErrors. */
export async function api(path, { method = "GET", body, signal } = {}) {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), REQUEST_TIMEOUT_MS);
  signal?.addEventListener("abort", () => timeout.abort(), { once: true });
  const headers = { Accept: "application/json, application/problem+json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: timeout.signal,
      credentials: "same-origin",
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new RequestError(t("error.network"), { network: true });
  } finally {
    clearTimeout(timer);
  }
  const type = response.headers.get("content-type") ?? "";
  let data = null;
  if (type.includes("json")) {
    try {
      data = await response.json();
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const problem = data && typeof data === "object" ? data : null;
    throw new RequestError(problem?.detail ?? t("error.unexpected", { status: response.status }), {
      status: response.status,
      problem,
      requestId: response.headers.get("x-request-id"),
    });
  }
  return data;
}
