import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useSyncExternalStore } from "react";

/** Client-side routing on the History API: the server answers every page path with index.html. */

export type Route =
  | { name: "projects" }
  | { name: "login" }
  | { name: "register" }
  | { name: "setup" }
  | { name: "project"; projectId: string }
  | { name: "device"; projectId: string; deviceId: string }
  | { name: "account" }
  | { name: "admin" }
  | { name: "notFound" };

const changeEvent = "sdk:navigate";

function subscribe(onChange: () => void): () => void {
  window.addEventListener("popstate", onChange);
  window.addEventListener(changeEvent, onChange);
  return () => {
    window.removeEventListener("popstate", onChange);
    window.removeEventListener(changeEvent, onChange);
  };
}

const currentLocation = () => location.pathname + location.search;

/** The current path and query, e.g. `/login?next=%2Faccount`. */
export function useLocation(): { path: string; search: URLSearchParams; href: string } {
  const href = useSyncExternalStore(subscribe, currentLocation);
  const url = new URL(href, location.origin);
  return { path: url.pathname, search: url.searchParams, href };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === currentLocation()) return;
  if (options.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  window.dispatchEvent(new Event(changeEvent));
  if (!options.replace) window.scrollTo(0, 0);
}

const segment = "([^/]+)";
const patterns: [RegExp, (m: string[]) => Route][] = [
  [/^\/$/, () => ({ name: "projects" })],
  [/^\/login$/, () => ({ name: "login" })],
  [/^\/register$/, () => ({ name: "register" })],
  [/^\/setup$/, () => ({ name: "setup" })],
  [/^\/account$/, () => ({ name: "account" })],
  [/^\/admin$/, () => ({ name: "admin" })],
  [new RegExp(`^/projects/${segment}$`), (m) => ({ name: "project", projectId: m[1]! })],
  [
    new RegExp(`^/projects/${segment}/devices/${segment}$`),
    (m) => ({ name: "device", projectId: m[1]!, deviceId: m[2]! }),
  ],
];

export function matchRoute(path: string): Route {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  for (const [pattern, route] of patterns) {
    const match = pattern.exec(trimmed);
    if (match) {
      try {
        return route(match.map((part) => decodeURIComponent(part)));
      } catch {
        return { name: "notFound" };
      }
    }
  }
  return { name: "notFound" };
}

export const paths = {
  project: (projectId: string) => `/projects/${encodeURIComponent(projectId)}`,
  device: (projectId: string, deviceId: string) =>
    `/projects/${encodeURIComponent(projectId)}/devices/${encodeURIComponent(deviceId)}`,
};

/** A real link (open in a new tab works) that navigates without a reload on a plain click. */
export function Link({ to, onClick, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const click = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={click} {...rest} />;
}

/** Replaces the current entry with `to` (for guards: signed out → /login). */
export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}
