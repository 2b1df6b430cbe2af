// A predicate resolved against a model: key paths are relationship steps plus an attribute, literals
// are typed values coerced to the type they are compared with. The evaluator and the SQL compiler
// both walk this form, so they cannot disagree about what a predicate means.
import CartographCore

/// A predicate checked against an entity of a model, ready to evaluate or to compile to SQL.
public struct CheckedPredicate: Sendable {
    /// The entity whose objects the predicate tests.
    public let entityName: String
    /// The predicate as parsed.
    public let source: Predicate
    let root: CheckedNode

    /// Most values a predicate binds when compiled: SQLite takes at most 32,766 parameters in one
    /// statement, and the query around the predicate binds a few of its own (a cursor's, the entity's
    /// names). The checker refuses a predicate whose constants pass it (`CheckedNode.boundValueCount`);
    /// the compiler counts again with the entity's names.
    static let maximumBoundValues = 32_000

    static func tooManyValues(_ count: Int) -> PredicateError {
        PredicateError(kind: .semantic, offset: 0, message: "the predicate holds \(count) values, more than the \(maximumBoundValues) one query can take")
    }
}

/// One relationship crossed by a key path.
struct RelationshipStep: Sendable {
    /// The relationship's name, as declared on `sourceEntity` or one of its parents.
    let name: String
    /// The entity the step starts from (as reached by the key path, possibly a sub-entity).
    let sourceEntity: String
    let destinationEntity: String
    let isToMany: Bool
}

/// An attribute reached through zero or more to-one relationships. A class, so that evaluation
/// passes it around by reference instead of copying (and retaining) every field.
final class AttributeReference: Sendable {
    let steps: [RelationshipStep]
    /// The entity the attribute is read from (the end of `steps`).
    let entity: String
    let name: String
    let type: AttributeType

    init(steps: [RelationshipStep], entity: String, name: String, type: AttributeType) {
        self.steps = steps
        self.entity = entity
        self.name = name
        self.type = type
    }
}

/// Which object a key path starts from: the tested object, or the current element inside
/// ANY/ALL/NONE.
enum Scope: Sendable { case root, element }

/// A collection function over a to-many key path.
enum CollectionFunction: Sendable, Equatable { case sum, avg, min, max }

/// A value a comparison reads.
enum Operand: Sendable {
    /// A coerced literal (already folded when the comparison has `[c]`/`[d]`); nil for nil.
    case constant(AttributeValue?)
    case attribute(Scope, AttributeReference)
    /// A to-one relationship's destination (only ever compared with nil); steps are to-one.
    case relatedObject(Scope, [RelationshipStep])
    /// SELF (never nil).
    case evaluatedObject
    /// `path.@count`: the steps end with the one to-many relationship.
    case count([RelationshipStep])
    /// `path.@sum.attribute` and friends: `collection` ends with the to-many relationship,
    /// `element` is read from each destination.
    case collectionFunction(CollectionFunction, collection: [RelationshipStep], element: AttributeReference, resultType: AttributeType)

    var isConstant: Bool { if case .constant = self { true } else { false } }
    var isNilConstant: Bool { if case .constant(nil) = self { true } else { false } }
}

/// What kind of values a comparison compares, which decides how both sides are compared.
enum ValueDomain: Sendable, Equatable {
    /// Integers, decimals and floating point, compared by value across types; `involvesDecimal`
    /// makes SQL use the registered comparison function.
    case numeric(involvesDecimal: Bool)
    /// string, uuid and uri: compared by Unicode code point, after folding for `[c]`/`[d]`.
    case text
    case date
    case boolean
    case binary
    /// transformable values and objects: only `== nil` / `!= nil`.
    case nilOnly
}

/// The string operators, numbered for the SQL function that evaluates them.
public enum StringOperator: Int, Sendable, CaseIterable {
    case contains = 1, beginsWith = 2, endsWith = 3, like = 4, matches = 5
}

/// A comparison of one value against a constant set, a range, another value or a pattern (a
/// class for the same reason as `AttributeReference`).
final class ScalarComparison: Sendable {
    enum Test: Sendable {
        /// `==`, `!=`, `<`, `<=`, `>`, `>=`.
        case order(ComparisonOperator, Operand)
        /// `BETWEEN {lower, upper}`, inclusive.
        case between(Operand, Operand)
        /// `IN {…}`: constants only.
        case oneOf([AttributeValue?])
        /// CONTAINS, BEGINSWITH, ENDSWITH, LIKE, MATCHES; `compiled` when the pattern is a constant.
        case string(StringOperator, Operand, compiled: StringPattern?)
    }

    let lhs: Operand
    let test: Test
    /// `[c]`/`[d]`, kept only in the text domain.
    let options: ComparisonOptions
    let domain: ValueDomain

    /// `attribute op constant` or `attribute op "pattern"` read straight from the object in
    /// scope: the most common shapes, which the evaluator takes a short path for.
    struct Direct: Sendable {
        enum Test: Sendable {
            /// ==, !=, <, … against a constant, no folding.
            case order(ComparisonOperator, AttributeValue?)
            /// A string operator with a compiled pattern (which folds by itself).
            case pattern(StringPattern)
        }

        let scope: Scope
        let attribute: String
        let test: Test
    }

    let direct: Direct?

    init(lhs: Operand, test: Test, options: ComparisonOptions, domain: ValueDomain) {
        self.lhs = lhs
        self.test = test
        self.options = options
        self.domain = domain
        if case .attribute(let scope, let reference) = lhs, reference.steps.isEmpty,
            case .order(let op, .constant(let constant)) = test, options.isEmpty
        {
            direct = Direct(scope: scope, attribute: reference.name, test: .order(op, constant))
        } else if case .attribute(let scope, let reference) = lhs, reference.steps.isEmpty,
            case .string(_, _, let compiled?) = test
        {
            direct = Direct(scope: scope, attribute: reference.name, test: .pattern(compiled))
        } else {
            direct = nil
        }
    }
}

/// A node of a checked predicate.
indirect enum CheckedNode: Sendable {
    case constant(Bool)
    case not(CheckedNode)
    case and([CheckedNode])
    case or([CheckedNode])
    case compare(ScalarComparison)
    /// ANY/ALL/NONE over the objects reached by `collection`; `element` reads them with `.element`.
    case quantified(Quantifier, collection: [RelationshipStep], element: CheckedNode)

    /// How many values compiling the node binds: each constant operand once, each `IN` member once.
    var boundValueCount: Int {
        switch self {
        case .constant: 0
        case .not(let inner), .quantified(_, _, let inner): inner.boundValueCount
        case .and(let operands), .or(let operands): operands.reduce(0) { $0 + $1.boundValueCount }
        case .compare(let comparison): comparison.boundValueCount
        }
    }
}

extension ScalarComparison {
    /// See `CheckedNode.boundValueCount`.
    var boundValueCount: Int {
        func count(_ operand: Operand) -> Int { operand.isConstant ? 1 : 0 }
        return switch test {
        case .order(_, let rhs): count(lhs) + count(rhs)
        case .between(let lower, let upper): count(lhs) + count(lower) + count(upper)
        case .oneOf(let members): count(lhs) + members.count
        case .string(_, let pattern, _): count(lhs) + count(pattern)
        }
    }
}
