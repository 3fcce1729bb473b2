import type { RouteRegistrar } from "./registrar.ts";

export const alertRoutes: RouteRegistrar = (route, services) => {
  const alerts = services.alerts;
  route("listAlertRules", ({ principal, params }) => alerts.listRules(principal, params.projectId!));
  route("createAlertRule", ({ principal, params, body }) =>
    alerts.createRule(principal, params.projectId!, body),
  );
  route("updateAlertRule", ({ principal, params, body }) =>
    alerts.updateRule(principal, params.projectId!, params.ruleId!, body),
  );
  route("deleteAlertRule", async ({ principal, params }) => {
    await alerts.deleteRule(principal, params.projectId!, params.ruleId!);
    return { ok: true as const };
  });
  route("listWebhooks", ({ principal, params }) => alerts.listWebhooks(principal, params.projectId!));
  route("createWebhook", ({ principal, params, body }) =>
    alerts.createWebhook(principal, params.projectId!, body),
  );
  route("deleteWebhook", async ({ principal, params }) => {
    await alerts.deleteWebhook(principal, params.projectId!, params.webhookId!);
    return { ok: true as const };
  });
  route("testWebhook", ({ principal, params }) =>
    alerts.testWebhook(principal, params.projectId!, params.webhookId!),
  );
  route("listAlertDeliveries", ({ principal, params, query }) =>
    alerts.listDeliveries(principal, params.projectId!, query),
  );
};
