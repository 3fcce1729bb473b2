import type { EndpointName, EndpointResult } from "@sdk/protocol";
import type { Config } from "../../config.ts";
import type { Services } from "../../services/index.ts";
import type { RouteInput } from "../route.ts";

export type Route = <N extends EndpointName>(
  name: N,
  handler: (input: RouteInput<N>) => Promise<EndpointResult<N>>,
) => void;

/** A group of REST routes: each one is an entry of the endpoint table bound to a service call. */
export type RouteRegistrar = (route: Route, services: Services, config: Config) => void;
