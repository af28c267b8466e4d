from sama_model.grouping import linked_groups


def test_chains_join_and_order_follows_the_input():
    # 1-3 and 3-5 link through 3; 2 and 4 link; 6 stands alone
    pairs = {(1, 3), (3, 5), (2, 4)}
    groups = linked_groups([1, 2, 3, 4, 5, 6], lambda a, b: (a, b) in pairs)
    assert groups == [[1, 3, 5], [2, 4], [6]]


def test_each_pair_is_asked_once_earlier_item_first():
    asked = []
    linked_groups("abc", lambda a, b: asked.append(a + b) or False)
    assert asked == ["ab", "ac", "bc"]
    assert linked_groups([], lambda a, b: True) == []
