import type { Device, LogEntry, PinState, StateValue, WatchEvent } from "@sdk/protocol";
import { useEffect, useReducer } from "react";
import { api } from "../api.ts";
import { useDeviceWatch, type WatchState } from "./useDeviceWatch.ts";

/** An entity's latest value, kept per entity id. */
export type LatestValue = Omit<StateValue, "entityId">;

export interface LiveDevice {
  status: "loading" | "error" | "ready";
  error?: unknown;
  device: Device | null;
  /** The latest value per entity id. */
  state: Record<string, LatestValue>;
  /** Oldest first, at most `maxLogs`. */
  logs: LogEntry[];
  /** The board's pins as the server knows them (empty while offline). */
  pins: PinState[];
  /** Events the server skipped because this page read too slowly. */
  dropped: number;
  watch: WatchState;
}

const maxLogs = 1000;
const initialLogs = 200;

type Action =
  | { type: "loaded"; device: Device; state: Record<string, LatestValue>; logs: LogEntry[] }
  | { type: "failed"; error: unknown }
  | { type: "logs"; logs: LogEntry[] }
  | { type: "pins"; pins: PinState[]; at: string }
  | { type: "event"; event: WatchEvent }
  | { type: "reset" };

type Data = Omit<LiveDevice, "watch"> & { pinsAt: string };

const empty: Data = {
  status: "loading",
  device: null,
  state: {},
  logs: [],
  pins: [],
  pinsAt: "",
  dropped: 0,
};

/** Adds entries (deduplicated by id; ids sort in time order), keeping the newest `maxLogs`. */
function mergeLogs(current: LogEntry[], added: LogEntry[]): LogEntry[] {
  const byId = new Map(current.map((e) => [e.id, e]));
  for (const entry of added) byId.set(entry.id, entry);
  const merged = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return merged.length > maxLogs ? merged.slice(merged.length - maxLogs) : merged;
}

/** Per entity, the value with the later time wins (REST answers and live events can cross). */
function mergeState(current: Record<string, LatestValue>, added: Record<string, LatestValue>) {
  const merged = { ...current };
  for (const [entityId, value] of Object.entries(added)) {
    const existing = merged[entityId];
    if (!existing || existing.updatedAt <= value.updatedAt) merged[entityId] = value;
  }
  return merged;
}

const stateMap = (list: StateValue[]): Record<string, LatestValue> =>
  Object.fromEntries(list.map((s) => [s.entityId, { value: s.value, updatedAt: s.updatedAt }]));

function reduce(data: Data, action: Action): Data {
  switch (action.type) {
    case "reset":
      return empty;
    case "logs":
      return { ...data, logs: mergeLogs(data.logs, action.logs) };
    case "pins":
      // A REST answer and a live event can cross: the later one wins.
      return action.at >= data.pinsAt ? { ...data, pins: action.pins, pinsAt: action.at } : data;
    case "failed":
      return { ...data, status: "error", error: action.error };
    case "loaded":
      return {
        ...data,
        status: "ready",
        device: action.device,
        state: mergeState(data.state, action.state),
        logs: mergeLogs(data.logs, action.logs),
      };
    case "event": {
      const event = action.event;
      switch (event.type) {
        case "snapshot":
          return {
            ...data,
            device: event.device,
            state: mergeState(data.state, stateMap(event.state)),
          };
        case "status":
          return data.device
            ? {
                ...data,
                device: { ...data.device, status: event.status, lastSeenAt: event.at },
                ...(event.status === "offline" ? { pins: [], pinsAt: event.at } : {}),
              }
            : data;
        case "pins":
          return reduce(data, { type: "pins", pins: event.pins, at: event.at });
        case "state":
          return {
            ...data,
            state: { ...data.state, [event.entityId]: { value: event.value, updatedAt: event.at } },
          };
        case "log":
          return { ...data, logs: mergeLogs(data.logs, [event.entry]) };
        case "lagged":
          return { ...data, dropped: data.dropped + event.dropped };
        default:
          return data;
      }
    }
  }
}

/**
 * One device, live: the device, its latest state and its recent logs from REST, kept current by
 * the watch socket's snapshot, status, state and log events.
 */
export function useLiveDevice(projectId: string, deviceId: string): LiveDevice {
  const [data, dispatch] = useReducer(reduce, empty);
  // Pins carry the server's times, so a late REST answer cannot undo a newer live event.
  const readPins = () =>
    api.getDevicePins({ params: { projectId, deviceId } }).then(
      (pins) =>
        dispatch({
          type: "pins",
          pins,
          at:
            pins
              .map((p) => p.updatedAt)
              .sort()
              .at(-1) ?? "",
        }),
      () => {},
    );
  // The socket opens once REST said the device is there to see; every snapshot (the first, and
  // after a reconnect) fetches the logs again, so lines written while not subscribed are not lost.
  const watch = useDeviceWatch(
    projectId,
    deviceId,
    (event) => {
      dispatch({ type: "event", event });
      if (event.type === "snapshot") {
        api.listDeviceLogs({ params: { projectId, deviceId }, query: { limit: initialLogs } }).then(
          (logs) => dispatch({ type: "logs", logs }),
          () => {},
        );
        readPins();
      }
    },
    data.status === "ready",
    { pins: true },
  );

  useEffect(() => {
    let current = true;
    dispatch({ type: "reset" });
    const params = { projectId, deviceId };
    Promise.all([
      api.getDevice({ params }),
      api.getDeviceState({ params }),
      api.listDeviceLogs({ params, query: { limit: initialLogs } }),
    ]).then(
      ([device, state, logs]) =>
        current &&
        dispatch({
          type: "loaded",
          device,
          state: stateMap(state),
          logs,
        }),
      (error: unknown) => current && dispatch({ type: "failed", error }),
    );
    return () => {
      current = false;
    };
  }, [projectId, deviceId]);

  const { pinsAt: _, ...shown } = data;
  return { ...shown, watch };
}
