// Delete rule names as model documents (`noAction`) and Core Data `contents` files (`No Action`)
// spell them, so that an imported XML model can pass its `deletionRule` through unchanged.

extension DeleteRule {
    /// Parses a canonical name (`nullify`) or a Core Data name (`Nullify`, `No Action`); nil otherwise.
    public init?(parsing name: String) {
        if let canonical = DeleteRule(rawValue: name) {
            self = canonical
            return
        }
        switch name {
        case "Nullify": self = .nullify
        case "Cascade": self = .cascade
        case "Deny": self = .deny
        case "No Action": self = .noAction
        default: return nil
        }
    }
}
