// Which limits apply to each tenant now (R-S2): the server's defaults under the tenant's own overrides,
// and the rate limiter that enforces their rates. The control plane tells it when a tenant's limits change.
import CartographStore

final class TenantLimitsInForce: Sendable {
    /// The server's defaults (`--tenant-rate-limit`, `--tenant-max-store-bytes`, …).
    private let defaults: ServerConfiguration
    private let control: ControlStore
    let rateLimiter = TenantRateLimiter()

    init(defaults: ServerConfiguration, control: ControlStore) {
        self.defaults = defaults
        self.control = control
        refreshRateLimiting()
    }

    /// The limits in force for `tenant`: its overrides over the server's defaults.
    func effective(tenant: String) -> EffectiveLimits { effective(control.tenant(tenant)?.limits ?? TenantLimits()) }

    /// The limits in force for a tenant with the overrides `limits`.
    func effective(_ limits: TenantLimits) -> EffectiveLimits { defaults.effectiveLimits(limits) }

    /// After a tenant's limits change or it is deleted: its bucket restarts under the new limits, and
    /// rate limiting is switched off altogether while no tenant can be limited.
    func changed(tenant: String) {
        rateLimiter.forget(tenant: tenant)
        refreshRateLimiting()
    }

    private func refreshRateLimiting() {
        let enabled = defaults.tenantRateLimit > 0 || control.tenants().contains { ($0.limits.requestsPerSecond ?? 0) > 0 }
        rateLimiter.setEnabled(enabled)
    }
}
