// Gives a parsed predicate meaning against a model: resolves key paths through relationships and
// inheritance, binds $variables, coerces literals to the type they meet (R-P3 rules, R-I2), and
// rejects what cannot be evaluated (unknown key paths, incompatible types, to-many key paths
// without ANY/ALL/NONE or a collection operator).
public import CartographCore
import Foundation

extension Predicate {
    /// Checks the predicate against `entity` of `model`, binding `$variables` from `variables`.
    ///
    /// - Throws: a `.semantic` `PredicateError` naming the offending key path and its offset.
    public func checked(against model: any PredicateModel, entity: String,
                        variables: [String: JSONValue] = [:]) throws(PredicateError) -> CheckedPredicate {
        var checker = PredicateChecker(model: model, variables: variables)
        guard model.predicateEntity(named: entity) != nil else {
            throw PredicateError(kind: .semantic, offset: 0, message: "unknown entity '\(entity)'")
        }
        let root = try checker.check(self, entity: entity)
        // Refused here rather than when compiled, so that a mapping holding such a predicate is refused
        // when it is registered, not on every payload.
        let values = root.boundValueCount
        guard values <= CheckedPredicate.maximumBoundValues else { throw CheckedPredicate.tooManyValues(values) }
        return CheckedPredicate(entityName: entity, source: self, root: root)
    }
}

extension CheckedPredicate {
    /// Parses and checks `format` in one step.
    public init(format: String, entity: String, model: any PredicateModel,
                variables: [String: JSONValue] = [:]) throws(PredicateError) {
        self = try Predicate(format: format).checked(against: model, entity: entity, variables: variables)
    }
}

/// A constant before it meets a type: a literal, a bound variable or a CAST.
private indirect enum ConstantSource {
    case null, boolean(Bool), number(String), string(String), date(Int64)
    case list([(ConstantSource, SourceOffset)])
}

/// An operand before the comparison decides how to use it.
private enum ResolvedOperand {
    case constant(ConstantSource, SourceOffset)
    /// A typed value; `type` nil means an object (a to-one destination or SELF).
    case typed(Operand, type: AttributeType?, offset: SourceOffset)
    /// A key path through a to-many relationship without a collection operator: only
    /// ANY/ALL/NONE, IN and CONTAINS can use it.
    case collection([RelationshipStep], element: Operand, elementType: AttributeType?, offset: SourceOffset, keyPath: [String])
}

private struct PredicateChecker {
    let model: any PredicateModel
    let variables: [String: JSONValue]

    /// A key path's relationships become one SQL subquery joining a table per step (two for a join
    /// table): SQLite joins at most 64 tables in one SELECT, so a longer path would fail in the store.
    static let maximumRelationshipsPerKeyPath = 32

    // MARK: Predicates

    mutating func check(_ predicate: Predicate, entity: String) throws(PredicateError) -> CheckedNode {
        switch predicate {
        case .constant(let value): return .constant(value)
        case .not(let inner): return .not(try check(inner, entity: entity))
        case .and(let operands):
            var checked: [CheckedNode] = []
            for operand in operands { checked.append(try check(operand, entity: entity)) }
            return .and(checked)
        case .or(let operands):
            var checked: [CheckedNode] = []
            for operand in operands { checked.append(try check(operand, entity: entity)) }
            return .or(checked)
        case .comparison(let comparison):
            return try check(comparison, entity: entity)
        }
    }

    func check(_ comparison: Comparison, entity: String) throws(PredicateError) -> CheckedNode {
        let lhs = try resolve(comparison.lhs, entity: entity)
        let rhs = try resolve(comparison.rhs, entity: entity)
        let op = comparison.comparisonOperator
        if let quantifier = comparison.quantifier {
            guard case .collection(let steps, let element, let elementType, let offset, _) = lhs else {
                throw PredicateError.semantic(at: comparison.lhs.offset,
                    "\(quantifier.rawValue) needs a key path through a to-many relationship on its left", keyPath: keyPath(of: comparison.lhs))
            }
            let inner = try compare(.typed(element, type: elementType, offset: offset), op, rhs, options: comparison.options)
            return .quantified(quantifier, collection: steps, element: inner)
        }
        // `value IN toMany.attribute` and `toMany.attribute CONTAINS value` test membership.
        if op == .in, case .collection(let steps, let element, let elementType, let offset, _) = rhs {
            let inner = try compare(lhs, .equalTo, .typed(element, type: elementType, offset: offset), options: comparison.options)
            return .quantified(.any, collection: steps, element: inner)
        }
        if op == .contains, case .collection(let steps, let element, let elementType, let offset, _) = lhs {
            let inner = try compare(.typed(element, type: elementType, offset: offset), .equalTo, rhs, options: comparison.options)
            return .quantified(.any, collection: steps, element: inner)
        }
        return try compare(lhs, op, rhs, options: comparison.options)
    }

    private func keyPath(of expression: Expression) -> [String]? {
        if case .keyPath(let components) = expression.kind { components } else { nil }
    }

    // MARK: Comparisons

    func compare(_ lhs: ResolvedOperand, _ op: ComparisonOperator, _ rhs: ResolvedOperand,
                 options: ComparisonOptions) throws(PredicateError) -> CheckedNode {
        for side in [lhs, rhs] {
            if case .collection(_, _, _, let offset, let keyPath) = side {
                throw PredicateError.semantic(at: offset,
                    "the key path '\(keyPath.joined(separator: "."))' goes through a to-many relationship: use ANY, ALL, NONE, IN or a collection operator (@count, @sum, @avg, @min, @max)",
                    keyPath: keyPath)
            }
        }
        switch op {
        case .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            let type = try commonType(lhs, rhs)
            let domain = try domain(of: type, for: op, at: offset(of: lhs), keyPath: keyPathText(lhs) ?? keyPathText(rhs))
            let keptOptions = domain == .text ? options : []
            let left = try operand(lhs, type: type, folding: keptOptions)
            let right = try operand(rhs, type: type, folding: keptOptions)
            if domain == .nilOnly, !left.isNilConstant, !right.isNilConstant {
                throw nilOnlyError(type, at: offset(of: lhs), keyPath: keyPathSteps(lhs) ?? keyPathSteps(rhs))
            }
            return .compare(ScalarComparison(lhs: left, test: .order(op, right), options: keptOptions,
                                             domain: refine(domain, left, right)))
        case .between:
            guard case .constant(.list(let bounds), let listOffset) = rhs, bounds.count == 2 else {
                throw PredicateError.semantic(at: offset(of: rhs), "BETWEEN needs {lower, upper} on its right")
            }
            let lower = ResolvedOperand.constant(bounds[0].0, bounds[0].1)
            let upper = ResolvedOperand.constant(bounds[1].0, bounds[1].1)
            let type = try commonType(lhs, lower, upper)
            let domain = try domain(of: type, for: op, at: listOffset, keyPath: keyPathText(lhs))
            let keptOptions = domain == .text ? options : []
            let left = try operand(lhs, type: type, folding: keptOptions)
            let low = try operand(lower, type: type, folding: keptOptions)
            let high = try operand(upper, type: type, folding: keptOptions)
            return .compare(ScalarComparison(lhs: left, test: .between(low, high), options: keptOptions,
                                             domain: refine(refine(domain, left, low), left, high)))
        case .in:
            guard case .constant(.list(let elements), _) = rhs else {
                throw PredicateError.semantic(at: offset(of: rhs), "IN needs {…}, an array $variable or a to-many key path on its right")
            }
            let members = elements.map { ResolvedOperand.constant($0.0, $0.1) }
            let type = try commonType([lhs] + members)
            let domain = try domain(of: type, for: .equalTo, at: offset(of: lhs), keyPath: keyPathText(lhs))
            let keptOptions = domain == .text ? options : []
            let left = try operand(lhs, type: type, folding: keptOptions)
            var values: [AttributeValue?] = []
            var refined = domain
            for member in members {
                let checked = try operand(member, type: type, folding: keptOptions)
                guard case .constant(let value) = checked else { continue }
                values.append(value)
                refined = refine(refined, left, checked)
            }
            if domain == .nilOnly, values.contains(where: { $0 != nil }) {
                throw nilOnlyError(type, at: offset(of: lhs), keyPath: keyPathSteps(lhs))
            }
            return .compare(ScalarComparison(lhs: left, test: .oneOf(values), options: keptOptions, domain: refined))
        case .contains, .beginsWith, .endsWith, .like, .matches:
            let stringOperator: StringOperator = switch op {
            case .contains: .contains
            case .beginsWith: .beginsWith
            case .endsWith: .endsWith
            case .like: .like
            default: .matches
            }
            let left = try textOperand(lhs, op)
            let right = try textOperand(rhs, op)
            var compiled: StringPattern?
            if case .constant(.string(let pattern)?) = right {
                do {
                    compiled = try StringPattern(stringOperator, options: options, pattern: pattern)
                } catch {
                    throw PredicateError.semantic(at: offset(of: rhs), "the MATCHES pattern is not a valid regular expression: \(error.message)")
                }
            }
            return .compare(ScalarComparison(lhs: left, test: .string(stringOperator, right, compiled: compiled),
                                             options: options, domain: .text))
        }
    }

    func nilOnlyError(_ type: AttributeType?, at offset: SourceOffset, keyPath: [String]?) -> PredicateError {
        .semantic(at: offset, "\(type.map { "\($0) values" } ?? "objects") can only be compared with nil", keyPath: keyPath)
    }

    /// The operand of a string operator: a text-typed value or a string constant (never coerced,
    /// so that a pattern stays as written).
    func textOperand(_ side: ResolvedOperand, _ op: ComparisonOperator) throws(PredicateError) -> Operand {
        switch side {
        case .constant(.string(let text), _): return .constant(.string(text))
        case .constant(.null, _): return .constant(nil)
        case .typed(let operand, let type?, _) where type == .string || type == .uuid || type == .uri: return operand
        default:
            throw PredicateError.semantic(at: offset(of: side), "\(op.rawValue) compares strings, and this operand is not a string",
                                          keyPath: keyPathSteps(side))
        }
    }

    /// Marks numeric comparisons in which a decimal takes part.
    func refine(_ domain: ValueDomain, _ operands: Operand...) -> ValueDomain {
        guard case .numeric(let involvesDecimal) = domain else { return domain }
        return .numeric(involvesDecimal: involvesDecimal || operands.contains(where: isDecimal))
    }

    func isDecimal(_ operand: Operand) -> Bool {
        switch operand {
        case .constant(.decimal?): true
        case .attribute(_, let reference): reference.type == .decimal
        case .collectionFunction(_, _, _, let resultType): resultType == .decimal
        default: false
        }
    }

    /// The type the operands are compared as: that of the first typed operand, else the natural
    /// type of the first non-nil constant; nil when every operand is nil or an object.
    func commonType(_ operands: ResolvedOperand...) throws(PredicateError) -> AttributeType? {
        try commonType(operands)
    }

    func commonType(_ operands: [ResolvedOperand]) throws(PredicateError) -> AttributeType? {
        var typed: (AttributeType?, ResolvedOperand)?
        for operand in operands {
            guard case .typed(_, let type, _) = operand else { continue }
            if let (firstType, first) = typed {
                guard Self.domainKey(firstType) == Self.domainKey(type) else {
                    throw PredicateError.semantic(at: offset(of: operand),
                        "cannot compare \(describe(firstType)) '\(keyPathText(first) ?? "value")' with \(describe(type)) '\(keyPathText(operand) ?? "value")'",
                        keyPath: keyPathSteps(operand))
                }
            } else {
                typed = (type, operand)
            }
        }
        if let typed { return typed.0 }
        for case .constant(let source, _) in operands {
            if let type = naturalType(source) { return type }
        }
        return nil
    }

    private func describe(_ type: AttributeType?) -> String { type.map { "the \($0)" } ?? "the object" }

    /// Types that compare with each other share a key.
    private static func domainKey(_ type: AttributeType?) -> String {
        guard let type else { return "object" }
        if type.isNumeric { return "numeric" }
        switch type {
        case .string, .uuid, .uri: return "text"
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .boolean, .date, .binary, .transformable: return type.rawValue
        }
    }

    func naturalType(_ source: ConstantSource) -> AttributeType? {
        switch source {
        case .null, .list: nil
        case .boolean: .boolean
        case .number(let text):
            NumberText(text).map { number in
                number.int64Value != nil ? .integer64 : (number.decimalValue != nil ? .decimal : .double)
            } ?? .double
        case .string: .string
        case .date: .date
        }
    }

    func domain(of type: AttributeType?, for op: ComparisonOperator, at offset: SourceOffset, keyPath: String?) throws(PredicateError) -> ValueDomain {
        let domain: ValueDomain
        switch type {
        case nil: domain = .nilOnly
        case let type? where type.isNumeric: domain = .numeric(involvesDecimal: type == .decimal)
        case .string?, .uuid?, .uri?: domain = .text
        case .date?: domain = .date
        case .boolean?: domain = .boolean
        case .binary?: domain = .binary
        case .transformable?: domain = .nilOnly
        case .integer16?, .integer32?, .integer64?, .decimal?, .double?, .float?: domain = .numeric(involvesDecimal: type == .decimal)
        }
        let isOrdering = op != .equalTo && op != .notEqualTo
        if isOrdering, domain == .nilOnly {
            throw PredicateError.semantic(at: offset, "\(type.map { "\($0) values" } ?? "objects") cannot be ordered",
                                          keyPath: keyPath.map { $0.split(separator: ".").map(String.init) })
        }
        return domain
    }

    /// The checked operand, with constants coerced to `type` and folded for `[c]`/`[d]`.
    func operand(_ side: ResolvedOperand, type: AttributeType?, folding options: ComparisonOptions) throws(PredicateError) -> Operand {
        switch side {
        case .typed(let operand, _, _): return operand
        case .collection: preconditionFailure("collections are rejected before operands are built")
        case .constant(let source, let offset):
            var value = try coerce(source, to: type, at: offset)
            if !options.isEmpty, case .string(let text)? = value { value = .string(StringFolding.fold(text, options)) }
            if !options.isEmpty, case .uuid(let text)? = value { value = .uuid(StringFolding.fold(text, options)) }
            if !options.isEmpty, case .uri(let text)? = value { value = .uri(StringFolding.fold(text, options)) }
            if type == nil, value != nil {
                throw PredicateError.semantic(at: offset, "an object can only be compared with nil")
            }
            return .constant(value)
        }
    }

    // MARK: Constants

    /// R-P3's coercion of a literal to the type it is compared with.
    func coerce(_ source: ConstantSource, to type: AttributeType?, at offset: SourceOffset) throws(PredicateError) -> AttributeValue? {
        guard let type else {
            if case .null = source { return nil }
            throw PredicateError.semantic(at: offset, "an object can only be compared with nil")
        }
        func fail(_ message: String) -> PredicateError { .semantic(at: offset, message) }
        switch source {
        case .null: return nil
        case .list: throw fail("a {…} list can only be the right side of IN or BETWEEN")
        case .date(let milliseconds):
            guard type == .date else { throw fail("a date cannot be compared with \(type.withArticle) value") }
            return .date(millisecondsSince1970: milliseconds)
        case .number(let text) where type.isNumeric:
            guard let number = NumberText(text) else { throw fail("\(text) is not a number") }
            switch type {
            case .decimal:
                guard let decimal = number.decimalValue else { throw fail("\(text) has more than \(NumberText.maximumDecimalDigits) significant digits") }
                return .decimal(decimal)
            case .double, .float:
                guard let double = number.doubleValue else { throw fail("\(text) is out of range") }
                return .double(double)
            case .integer16, .integer32, .integer64, .string, .boolean, .date, .binary, .uuid, .uri, .transformable:
                // An integer attribute compared with 12.5 compares by value, as Foundation does (only numeric types reach here).
                if let integer = number.int64Value { return .integer(integer) }
                guard let double = number.doubleValue else { throw fail("\(text) is out of range") }
                return .double(double)
            }
        case .boolean(let flag) where type.isNumeric:
            return type == .decimal ? .decimal(flag ? 1 : 0) : (type.isInteger ? .integer(flag ? 1 : 0) : .double(flag ? 1 : 0))
        case .boolean, .number, .string:
            let json: JSONValue = switch source {
            case .boolean(let flag): .bool(flag)
            case .number(let text): .number(JSONNumber(validatedText: text))
            case .string(let text): .string(text)
            default: .null
            }
            do {
                return try AttributeValue.coerce(json, to: type)
            } catch {
                throw fail("cannot compare with \(type.withArticle) value: \(error.message)")
            }
        }
    }

    // MARK: Operands

    func resolve(_ expression: Expression, entity: String) throws(PredicateError) -> ResolvedOperand {
        switch expression.kind {
        case .literal(let literal):
            return .constant(constant(literal), expression.offset)
        case .variable(let name):
            guard let value = variables[name] else {
                throw PredicateError.semantic(at: expression.offset, "the variable $\(name) has no value in arguments")
            }
            return .constant(try constant(value, name: name, at: expression.offset), expression.offset)
        case .aggregate(let elements):
            var list: [(ConstantSource, SourceOffset)] = []
            for element in elements {
                guard case .constant(let source, let offset) = try resolve(element, entity: entity) else {
                    throw PredicateError.semantic(at: element.offset, "the elements of {…} must be literals or $variables",
                                                  keyPath: keyPath(of: element))
                }
                list.append((source, offset))
            }
            return .constant(.list(list), expression.offset)
        case .cast(let value, let className):
            guard className == "NSDate" else {
                throw PredicateError.semantic(at: expression.offset, "CAST supports only \"NSDate\", not \"\(className)\"")
            }
            guard case .constant(let source, _) = try resolve(value, entity: entity) else {
                throw PredicateError.semantic(at: value.offset, "CAST needs a literal or a $variable", keyPath: keyPath(of: value))
            }
            return .constant(try castToDate(source, at: value.offset), expression.offset)
        case .evaluatedObject:
            return .typed(.evaluatedObject, type: nil, offset: expression.offset)
        case .keyPath(let components):
            return try resolveKeyPath(components, entity: entity, offset: expression.offset)
        }
    }

    func constant(_ literal: Literal) -> ConstantSource {
        switch literal {
        case .null: .null
        case .boolean(let flag): .boolean(flag)
        case .number(let text): .number(text)
        case .string(let text): .string(text)
        }
    }

    func constant(_ value: JSONValue, name: String, at offset: SourceOffset) throws(PredicateError) -> ConstantSource {
        switch value {
        case .null: return .null
        case .bool(let flag): return .boolean(flag)
        case .number(let number): return .number(number.text)
        case .string(let text): return .string(text)
        case .array(let elements):
            var list: [(ConstantSource, SourceOffset)] = []
            for element in elements {
                if case .array = element { throw PredicateError.semantic(at: offset, "$\(name) holds nested arrays") }
                list.append((try constant(element, name: name, at: offset), offset))
            }
            return .list(list)
        case .object:
            throw PredicateError.semantic(at: offset, "$\(name) is an object; arguments are strings, numbers, booleans, null or arrays of them")
        }
    }

    /// Foundation's CAST(…, "NSDate"): a number is seconds since 2001-01-01T00:00:00Z (the
    /// reference date); a string must be ISO 8601.
    func castToDate(_ source: ConstantSource, at offset: SourceOffset) throws(PredicateError) -> ConstantSource {
        switch source {
        case .date: return source
        case .string(let text):
            guard let milliseconds = ISO8601Instant.milliseconds(from: text) else {
                throw PredicateError.semantic(at: offset, "\"\(text)\" is not an ISO 8601 date-time")
            }
            return .date(milliseconds)
        case .number(let text):
            let referenceDate: Int64 = 978_307_200_000
            guard let milliseconds = NumberText(text)?.floorScaled(by: 3),
                case (let sum, false) = milliseconds.addingReportingOverflow(referenceDate)
            else { throw PredicateError.semantic(at: offset, "\(text) is out of range for a date") }
            return .date(sum)
        default:
            throw PredicateError.semantic(at: offset, "CAST to NSDate needs a number of seconds or an ISO 8601 string")
        }
    }

    /// Resolves `a.b.c` from `entity`: to-one steps, at most one to-many step, collection operators.
    func resolveKeyPath(_ components: [String], entity: String, offset: SourceOffset) throws(PredicateError) -> ResolvedOperand {
        func fail(_ message: String) -> PredicateError { .semantic(at: offset, message, keyPath: components) }
        var steps: [RelationshipStep] = []
        var current = entity
        var index = 0
        while index < components.count {
            let name = components[index]
            if let collectionOperator = CollectionOperator(rawValue: name) {
                guard let toMany = steps.lastIndex(where: \.isToMany), toMany == steps.count - 1 else {
                    throw fail("\(name) needs a to-many relationship before it")
                }
                if collectionOperator == .count {
                    guard index == components.count - 1 else { throw fail("@count ends a key path") }
                    return .typed(.count(steps), type: .integer64, offset: offset)
                }
                let rest = Array(components[(index + 1)...])
                guard !rest.isEmpty else { throw fail("\(name) needs an attribute after it (\(name).attribute)") }
                guard case .typed(.attribute(_, let element), let type?, _) = try resolveKeyPath(rest, entity: current, offset: offset) else {
                    throw fail("\(name) needs an attribute reached through to-one relationships after it")
                }
                let function: CollectionFunction
                let resultType: AttributeType
                switch collectionOperator {
                case .sum, .avg:
                    guard type.isNumeric else { throw fail("\(name) needs a numeric attribute, and '\(element.name)' is \(type)") }
                    function = collectionOperator == .sum ? .sum : .avg
                    resultType = type == .decimal ? .decimal : (collectionOperator == .sum && type.isInteger ? .integer64 : .double)
                default:
                    guard type.isNumeric || type == .date || type == .string || type == .uuid || type == .uri else {
                        throw fail("\(name) needs a numeric, date or string attribute, and '\(element.name)' is \(type)")
                    }
                    function = collectionOperator == .min ? .min : .max
                    resultType = type
                }
                return .typed(.collectionFunction(function, collection: steps, element: element, resultType: resultType),
                              type: resultType, offset: offset)
            }
            if let type = attributeType(name, entity: current) {
                guard index == components.count - 1 else {
                    throw fail("'\(name)' is an attribute of \(current), so the key path cannot continue after it")
                }
                let reference = AttributeReference(steps: [], entity: current, name: name, type: type)
                return try finish(steps, reading: reference, type: type, offset: offset, components: components)
            }
            guard let relationship = relationship(name, entity: current) else {
                throw fail("\(current) has no attribute or relationship '\(name)'"
                    + NameSuggestion.hint(for: name, among: propertyNames(of: current), kind: "its attributes and relationships"))
            }
            if relationship.isToMany, steps.contains(where: \.isToMany) {
                throw fail("the key path crosses more than one to-many relationship")
            }
            guard steps.count < Self.maximumRelationshipsPerKeyPath else {
                throw fail("a key path crosses at most \(Self.maximumRelationshipsPerKeyPath) relationships")
            }
            steps.append(RelationshipStep(name: name, sourceEntity: current, destinationEntity: relationship.destinationEntityName,
                                          isToMany: relationship.isToMany))
            guard model.predicateEntity(named: relationship.destinationEntityName) != nil else {
                throw fail("the relationship '\(name)' leads to the unknown entity '\(relationship.destinationEntityName)'")
            }
            current = relationship.destinationEntityName
            index += 1
        }
        // The key path ends with a relationship: the destination object(s).
        return try finish(steps, reading: nil, type: nil, offset: offset, components: components)
    }

    /// Splits steps at the to-many relationship (if any) into a collection and an element operand.
    private func finish(_ steps: [RelationshipStep], reading attribute: AttributeReference?, type: AttributeType?,
                        offset: SourceOffset, components: [String]) throws(PredicateError) -> ResolvedOperand {
        guard let toMany = steps.firstIndex(where: \.isToMany) else {
            if let attribute {
                return .typed(.attribute(.root, AttributeReference(steps: steps, entity: attribute.entity, name: attribute.name, type: attribute.type)),
                              type: type, offset: offset)
            }
            return .typed(steps.isEmpty ? .evaluatedObject : .relatedObject(.root, steps), type: nil, offset: offset)
        }
        let collection = Array(steps[...toMany])
        let elementSteps = Array(steps[(toMany + 1)...])
        let element: Operand
        if let attribute {
            element = .attribute(.element, AttributeReference(steps: elementSteps, entity: attribute.entity, name: attribute.name, type: attribute.type))
        } else {
            element = elementSteps.isEmpty ? .evaluatedObject : .relatedObject(.element, elementSteps)
        }
        return .collection(collection, element: element, elementType: type, offset: offset, keyPath: components)
    }

    /// Looks `name` up on `entity` and its parents (R-M3).
    func attributeType(_ name: String, entity: String) -> AttributeType? {
        var current: String? = entity
        var visited = 0
        while let entityName = current, visited < 256, let description = model.predicateEntity(named: entityName) {
            if let type = description.attributeType(named: name) { return type }
            current = description.parentEntityName
            visited += 1
        }
        return nil
    }

    /// The attribute and relationship names of `entity` and its parents.
    func propertyNames(of entity: String) -> [String] {
        var names: [String] = []
        var current: String? = entity
        var visited = 0
        while let entityName = current, visited < 256, let description = model.predicateEntity(named: entityName) {
            names += description.propertyNames
            current = description.parentEntityName
            visited += 1
        }
        return names
    }

    func relationship(_ name: String, entity: String) -> PredicateRelationship? {
        var current: String? = entity
        var visited = 0
        while let entityName = current, visited < 256, let description = model.predicateEntity(named: entityName) {
            if let relationship = description.relationship(named: name) { return relationship }
            current = description.parentEntityName
            visited += 1
        }
        return nil
    }

    // MARK: Describing operands in errors

    func offset(of side: ResolvedOperand) -> SourceOffset {
        switch side {
        case .constant(_, let offset), .typed(_, _, let offset), .collection(_, _, _, let offset, _): offset
        }
    }

    func keyPathSteps(_ side: ResolvedOperand) -> [String]? {
        switch side {
        case .collection(_, _, _, _, let keyPath): return keyPath
        case .typed(let operand, _, _):
            switch operand {
            case .attribute(_, let reference): return reference.steps.map(\.name) + [reference.name]
            case .relatedObject(_, let steps): return steps.map(\.name)
            case .count(let steps): return steps.map(\.name) + ["@count"]
            case .collectionFunction(_, let collection, let element, _): return collection.map(\.name) + element.steps.map(\.name) + [element.name]
            default: return nil
            }
        case .constant: return nil
        }
    }

    func keyPathText(_ side: ResolvedOperand) -> String? { keyPathSteps(side)?.joined(separator: ".") }
}
