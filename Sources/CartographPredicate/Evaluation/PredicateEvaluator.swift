// In-memory evaluation of a checked predicate over objects that are not (yet) stored: the
// mapping engine's identification, source/destination and deletion predicates (R-I3, R-C3, R-D1).
// Foundation's semantics: nil == nil, ordering with nil is false, ALL over nothing is true.
import CartographCore

extension CheckedPredicate {
    /// True when `object` (of the checked entity or a sub-entity) matches.
    public func evaluate<Object: PredicateObject>(_ object: Object) -> Bool {
        Evaluator<Object>.evaluate(root, root: object, element: nil)
    }
}

private enum Evaluator<Object: PredicateObject> {
    /// What an object operand evaluates to when the object exists: objects are only ever
    /// compared with nil, so presence is all that matters.
    static var presentObject: AttributeValue { .boolean(true) }

    static func evaluate(_ node: CheckedNode, root: Object, element: Object?) -> Bool {
        switch node {
        case .constant(let value):
            return value
        case .not(let inner):
            return !evaluate(inner, root: root, element: element)
        case .and(let operands):
            for operand in operands where !evaluate(operand, root: root, element: element) { return false }
            return true
        case .or(let operands):
            for operand in operands where evaluate(operand, root: root, element: element) { return true }
            return false
        case .compare(let comparison):
            return compare(comparison, root: root, element: element)
        case .quantified(let quantifier, let steps, let inner):
            let elements = collect(steps, from: root)
            switch quantifier {
            case .any: return elements.contains { evaluate(inner, root: root, element: $0) }
            case .all: return elements.allSatisfy { evaluate(inner, root: root, element: $0) }
            case .none: return !elements.contains { evaluate(inner, root: root, element: $0) }
            }
        }
    }

    static func compare(_ comparison: ScalarComparison, root: Object, element: Object?) -> Bool {
        if let direct = comparison.direct {
            let value = (direct.scope == .root ? root : element)?.attributeValue(named: direct.attribute)
            switch direct.test {
            case .order(let op, let constant): return order(value, op, constant)
            case .pattern(let pattern): return value?.text.map(pattern.matches) ?? false
            }
        }
        // String operators fold inside `StringPattern`; everything else compares folded text.
        let isStringTest = if case .string = comparison.test { true } else { false }
        let lhs = value(comparison.lhs, isStringTest ? [] : comparison.options, root: root, element: element)
        switch comparison.test {
        case .order(let op, let rhsOperand):
            return order(lhs, op, value(rhsOperand, comparison.options, root: root, element: element))
        case .between(let lowerOperand, let upperOperand):
            guard let lhs,
                let lower = value(lowerOperand, comparison.options, root: root, element: element),
                let upper = value(upperOperand, comparison.options, root: root, element: element),
                let fromLower = ValueComparison.order(lower, lhs), let toUpper = ValueComparison.order(lhs, upper)
            else { return false }
            return fromLower <= 0 && toUpper <= 0
        case .oneOf(let values):
            return values.contains { ValueComparison.equal(lhs, $0) }
        case .string(let stringOperator, let patternOperand, let compiled):
            guard let subject = lhs?.text else { return false }
            if let compiled { return compiled.matches(subject) }
            guard let pattern = value(patternOperand, [], root: root, element: element)?.text,
                let matcher = try? StringPattern(stringOperator, options: comparison.options, pattern: pattern)
            else { return false }
            return matcher.matches(subject)
        }
    }

    /// `lhs op rhs` for ==, !=, <, <=, >, >= with Foundation's nil rules.
    static func order(_ lhs: AttributeValue?, _ op: ComparisonOperator, _ rhs: AttributeValue?) -> Bool {
        switch op {
        case .equalTo: return ValueComparison.equal(lhs, rhs)
        case .notEqualTo: return !ValueComparison.equal(lhs, rhs)
        default:
            guard let lhs, let rhs, let order = ValueComparison.order(lhs, rhs) else { return false }
            switch op {
            case .lessThan: return order < 0
            case .lessThanOrEqualTo: return order <= 0
            case .greaterThan: return order > 0
            default: return order >= 0
            }
        }
    }

    /// The operand's value; text read from objects is folded for `[c]`/`[d]` (constants already are).
    static func value(_ operand: Operand, _ options: ComparisonOptions, root: Object, element: Object?) -> AttributeValue? {
        if case .constant(let value) = operand { return value }
        let value = unfoldedValue(operand, root: root, element: element)
        return options.isEmpty ? value : value?.folded(options)
    }

    static func unfoldedValue(_ operand: Operand, root: Object, element: Object?) -> AttributeValue? {
        switch operand {
        case .constant(let value):
            return value
        case .attribute(let scope, let reference):
            guard let start = scope == .root ? root : element, let object = follow(reference.steps, from: start) else { return nil }
            return object.attributeValue(named: reference.name)
        case .relatedObject(let scope, let steps):
            guard let start = scope == .root ? root : element else { return nil }
            return follow(steps, from: start) == nil ? nil : presentObject
        case .evaluatedObject:
            return presentObject
        case .count(let steps):
            return .integer(Int64(collect(steps, from: root).count))
        case .collectionFunction(let function, let collection, let reference, let resultType):
            let values = collect(collection, from: root).compactMap { object in
                follow(reference.steps, from: object)?.attributeValue(named: reference.name)
            }
            return aggregate(function, values, resultType: resultType)
        }
    }

    /// @sum, @avg, @min, @max with SQL's rules: nils are skipped, a sum of nothing is 0, the
    /// others of nothing are nil.
    static func aggregate(_ function: CollectionFunction, _ values: [AttributeValue], resultType: AttributeType) -> AttributeValue? {
        if resultType == .decimal {
            var aggregation = DecimalAggregation(function.decimalFunction)
            for case .decimal(let value) in values { aggregation.add(value) }
            return aggregation.result.map { .decimal($0) }
        }
        switch function {
        case .sum:
            if resultType == .integer64 {
                var total: Int64 = 0
                for case .integer(let value) in values { total &+= value }
                return .integer(total)
            }
            return .double(values.reduce(0) { $0 + ($1.doubleValue ?? 0) })
        case .avg:
            guard !values.isEmpty else { return nil }
            return .double(values.reduce(0) { $0 + ($1.doubleValue ?? 0) } / Double(values.count))
        case .min, .max:
            let wanted = function == .min ? -1 : 1
            return values.reduce(nil) { best, value in
                guard let best else { return value }
                return ValueComparison.order(value, best) == wanted ? value : best
            }
        }
    }

    static func follow(_ steps: [RelationshipStep], from object: Object) -> Object? {
        var current = object
        for step in steps {
            guard let next = current.relatedObject(named: step.name) else { return nil }
            current = next
        }
        return current
    }

    static func collect(_ steps: [RelationshipStep], from object: Object) -> [Object] {
        var objects = [object]
        for step in steps {
            objects = step.isToMany
                ? objects.flatMap { $0.relatedObjects(named: step.name) }
                : objects.compactMap { $0.relatedObject(named: step.name) }
        }
        return objects
    }
}

extension CollectionFunction {
    var decimalFunction: DecimalAggregation.Function {
        switch self {
        case .sum: .sum
        case .avg: .avg
        case .min: .min
        case .max: .max
        }
    }
}

extension AttributeValue {
    /// The text of a string, uuid or uri value.
    var text: String? {
        switch self {
        case .string(let text), .uuid(let text), .uri(let text): text
        default: nil
        }
    }

    var doubleValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    /// A text value folded for `[c]`/`[d]`; other values unchanged.
    func folded(_ options: ComparisonOptions) -> AttributeValue {
        switch self {
        case .string(let text): .string(StringFolding.fold(text, options))
        case .uuid(let text): .uuid(StringFolding.fold(text, options))
        case .uri(let text): .uri(StringFolding.fold(text, options))
        default: self
        }
    }
}
