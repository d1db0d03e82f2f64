// TypeDoc plugin (typedoc.json `plugin`): every exported function of the public entries has a doc comment.
// TypeDoc's own notDocumented check cannot ask that alone: its `Function` kind also requires a comment on
// each method signature of every interface, down to the nested call chains of the structural ORM and
// OpenTelemetry slices (`createQueryBuilder().update().set().where()…`). typedoc.json requires a comment
// on every exported class, interface, type, variable and enum; this plugin adds exported functions.
// Members (properties, methods) are not required yet.
import { Application, ReflectionKind } from 'typedoc';

/** @param {Application} app */
export function load(app) {
  app.on(Application.EVENT_VALIDATE_PROJECT, (project) => {
    if (!app.options.getValue('validation').notDocumented) return;
    for (const fn of project.getReflectionsByKind(ReflectionKind.Function)) {
      const documented = fn.hasComment() || (fn.signatures ?? []).some((signature) => signature.hasComment());
      if (!documented) {
        app.logger.warn(`${fn.getFriendlyFullName()} (Function) does not have any documentation`);
      }
    }
  });
}
