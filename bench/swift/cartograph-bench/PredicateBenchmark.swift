// Predicate language costs: parse, check and compile per predicate, and in-memory evaluation over
// 1M objects against a hand-written closure that makes the same comparisons.
import Foundation
import CartographCore
import CartographPredicate
import CartographTesting

enum PredicateBenchmark {
    /// A model shaped like the tests' (Item -> owner Person -> company Company, Item -> tags).
    struct BenchModel: PredicateModel, PredicateSQLSchema {
        struct Entity: PredicateEntity {
            let name: String
            let attributes: [String: AttributeType]
            let relationships: [String: PredicateRelationship]
            var parentEntityName: String? { nil }
            func attributeType(named name: String) -> AttributeType? { attributes[name] }
            func relationship(named name: String) -> PredicateRelationship? { relationships[name] }
        }

        let entities: [String: Entity] = [
            "Item": Entity(name: "Item", attributes: ["name": .string, "qty": .integer64, "price": .decimal, "score": .double,
                                                      "active": .boolean, "when": .date],
                           relationships: ["owner": PredicateRelationship(destinationEntityName: "Person", isToMany: false),
                                           "tags": PredicateRelationship(destinationEntityName: "Tag", isToMany: true)]),
            "Person": Entity(name: "Person", attributes: ["name": .string, "age": .integer64], relationships: [:]),
            "Tag": Entity(name: "Tag", attributes: ["label": .string], relationships: [:]),
        ]

        func predicateEntity(named name: String) -> (any PredicateEntity)? { entities[name] }
        func table(forEntity entity: String) -> PredicateSQLTable? {
            PredicateSQLTable(name: entity, idColumn: "_id", entityColumn: "_entity", entityNames: [entity])
        }
        func column(forAttribute attribute: String, ofEntity entity: String) -> String? { attribute }
        func storage(forRelationship relationship: String, ofEntity entity: String) -> PredicateSQLRelationship? {
            relationship == "owner" ? .foreignKey(column: "owner_id") : .destinationForeignKey(column: "item_id")
        }
    }

    static let typicalPredicates = [
        "qty > 500",
        "name == \"item-42\"",
        "active == YES AND score < 0.5",
        "name BEGINSWITH[cd] \"ITEM-1\" OR qty BETWEEN {10, 20}",
        "owner.name ==[c] \"alice\" AND owner.age >= 30",
        "ANY tags.label IN {\"red\", \"green\", \"blue\"}",
        "tags.@count > 2 AND NOT (price <= 12.50)",
        "when > CAST(\"2024-01-01T00:00:00Z\", \"NSDate\") AND when < \"2024-06-30T00:00:00Z\"",
        "(qty > 1 AND qty < 100) OR (score >= 0.25 AND score <= 0.75) OR name LIKE \"item-?7*\"",
        "NONE tags.label MATCHES \"[a-z]+-[0-9]+\" AND owner != nil",
    ]

    /// An object of the evaluation benchmark.
    final class BenchObject: PredicateObject {
        let attributes: [String: AttributeValue]
        init(_ attributes: [String: AttributeValue]) { self.attributes = attributes }
        func attributeValue(named name: String) -> AttributeValue? { attributes[name] }
        func relatedObject(named name: String) -> BenchObject? { nil }
        func relatedObjects(named name: String) -> [BenchObject] { [] }
    }

    static func run() {
        let model = BenchModel()
        let rounds = 2_000
        print("## Predicates: parse / check / compile (ns per predicate, \(typicalPredicates.count) typical predicates × \(rounds); \(Runs.count) runs, min/median)")
        let parse = Runs.measure {
            for _ in 0..<rounds { for format in typicalPredicates { _ = try! Predicate(format: format) } }
        }
        let check = Runs.measure {
            for _ in 0..<rounds { for format in typicalPredicates { _ = try! CheckedPredicate(format: format, entity: "Item", model: model) } }
        }
        let compile = Runs.measure {
            for _ in 0..<rounds {
                for format in typicalPredicates { _ = try! CheckedPredicate(format: format, entity: "Item", model: model).sql(schema: model) }
            }
        }
        let count = Double(rounds * typicalPredicates.count)
        for (label, timing) in [("parse", parse), ("parse+check", check), ("parse+check+compile", compile)] {
            print(label.padding(22) + String(format: " min %7.0f ns  median %7.0f ns", timing.min / count * 1e9, timing.median / count * 1e9))
        }

        let objectCount = 1_000_000
        var random = SeededRandom(seed: 7)
        let objects = (0..<objectCount).map { index in
            BenchObject(["qty": .integer(Int64(random.next() % 1_000)), "score": .double(Double(random.next() % 1_000) / 1_000),
                         "name": .string("item-\(index)")])
        }
        print("## Predicates: in-memory evaluation over \(objectCount) objects (\(Runs.count) runs, min/median), evaluator vs hand-written closure")
        let cases: [(String, (BenchObject) -> Bool)] = [
            ("qty > 500 AND score < 0.5", { object in
                guard case .integer(let qty)? = object.attributeValue(named: "qty"), qty > 500,
                    case .double(let score)? = object.attributeValue(named: "score")
                else { return false }
                return score < 0.5
            }),
            ("name BEGINSWITH \"item-1\"", { object in
                guard case .string(let name)? = object.attributeValue(named: "name") else { return false }
                return name.utf8.starts(with: "item-1".utf8)
            }),
        ]
        for (format, closure) in cases {
            let predicate = try! CheckedPredicate(format: format, entity: "Item", model: model)
            var evaluatorMatches = 0, closureMatches = 0
            let evaluator = Runs.measure { evaluatorMatches = objects.reduce(0) { $0 + (predicate.evaluate($1) ? 1 : 0) } }
            let handWritten = Runs.measure { closureMatches = objects.reduce(0) { $0 + (closure($1) ? 1 : 0) } }
            precondition(evaluatorMatches == closureMatches, "evaluator and closure disagree on \(format)")
            print(format.padding(28) + String(format: " evaluator min %6.1f ms (%5.1f M/s) median %6.1f ms | closure min %6.1f ms median %6.1f ms | ratio min %.2fx median %.2fx",
                         evaluator.min * 1e3, Double(objectCount) / evaluator.min / 1e6, evaluator.median * 1e3,
                         handWritten.min * 1e3, handWritten.median * 1e3, evaluator.min / handWritten.min, evaluator.median / handWritten.median))
        }
    }
}

extension String {
    /// The string padded with spaces to `width` characters, for aligned report columns.
    fileprivate func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
